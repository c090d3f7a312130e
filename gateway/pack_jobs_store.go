package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/state"
)

// jobStoreTimeout bounds one write or read of a job record.
const jobStoreTimeout = 5 * time.Second

// keepJobRecords is how long the record of an ended job stays in the
// store; each job's end prunes older ones.
const keepJobRecords = 24 * time.Hour

// jobRecords orders the two writes of a job's record: a job can end (and
// its end be recorded) before the starting call records its start, and
// the start must then not overwrite the end.
type jobRecords struct {
	mu      sync.Mutex
	started map[string]bool // start recorded, end not yet
	ended   map[string]bool // end recorded, start not yet
}

// recordJobStart writes the record of a job just started.
func (g *Gateway) recordJobStart(info packs.JobInfo) {
	r := &g.jobRecs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended[info.ID] {
		delete(r.ended, info.ID)
		return
	}
	if r.started == nil {
		r.started = map[string]bool{}
	}
	r.started[info.ID] = true
	g.putJob(info)
}

// recordJobEnd writes the record of a job that ended.
func (g *Gateway) recordJobEnd(info packs.JobInfo) {
	r := &g.jobRecs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started[info.ID] {
		delete(r.started, info.ID)
	} else {
		if r.ended == nil {
			r.ended = map[string]bool{}
		}
		r.ended[info.ID] = true
	}
	g.putJob(info)
	ctx, cancel := context.WithTimeout(context.Background(), jobStoreTimeout)
	defer cancel()
	if _, err := g.store.PruneJobs(ctx, time.Now().Add(-keepJobRecords)); err != nil {
		g.log.Warn("old job records not pruned from the shared store", "err", err)
	}
}

func (g *Gateway) putJob(info packs.JobInfo) {
	j := state.Job{ID: info.ID, Agent: info.Owner, Surface: info.Pack, Command: info.Command, State: string(info.State),
		Started: info.Started, Ended: info.Ended}
	if res := info.Result; res != nil {
		exit := res.ExitCode
		j.Exit, j.Error = &exit, g.runner.Redact(res.Err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobStoreTimeout)
	defer cancel()
	if err := g.store.PutJob(ctx, j); err != nil {
		// The job runs regardless; only other processes' job-status misses it.
		g.log.Warn("job record not written to the shared store", "agent", info.Owner, "job", info.ID, "err", err)
	}
}

// storedJob returns agent's job id on s from the store: a job another
// process of the deployment started.
func (g *Gateway) storedJob(agent string, s *surface, id string) (state.Job, bool) {
	if id == "" {
		return state.Job{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), jobStoreTimeout)
	defer cancel()
	j, err := g.store.GetJob(ctx, agent, id)
	if err != nil || j.Surface != s.pack.ID {
		return state.Job{}, false
	}
	return j, true
}

// storedJobs lists agent's job records on s in the store.
func (g *Gateway) storedJobs(agent string, s *surface) []state.Job {
	ctx, cancel := context.WithTimeout(context.Background(), jobStoreTimeout)
	defer cancel()
	all, err := g.store.ListJobs(ctx, agent)
	if err != nil {
		g.log.Warn("job records not readable from the shared store", "agent", agent, "err", err)
		return nil
	}
	var out []state.Job
	for _, j := range all {
		if j.Surface == s.pack.ID {
			out = append(out, j)
		}
	}
	return out
}

// elsewhere says that a job of another process cannot be read or
// cancelled from this one.
func elsewhere(id, what string) string {
	return fmt.Sprintf("job %s was started by another toolgate process of this deployment; its %s is only available there (job-status shows its state from here)", id, what)
}

// storedJobLine summarises a job record like jobLine.
func storedJobLine(j state.Job) string {
	line := fmt.Sprintf("%s %s:%s %s, started %s (in another toolgate process)", j.ID, j.Surface, j.Command, j.State, j.Started.UTC().Format(time.RFC3339))
	if j.Exit != nil {
		line += fmt.Sprintf(", exit %d", *j.Exit)
	}
	if j.Error != "" {
		line += ": " + j.Error
	}
	return line
}

// storedJobView is a job record's structured status.
func storedJobView(j state.Job) map[string]any {
	v := map[string]any{
		"job_id": j.ID, "command": j.Command, "state": j.State,
		"started": j.Started.UTC().Format(time.RFC3339Nano), "elsewhere": true,
	}
	if !j.Ended.IsZero() {
		v["ended"] = j.Ended.UTC().Format(time.RFC3339Nano)
	}
	if j.Exit != nil {
		v["exit"] = *j.Exit
	}
	if j.Error != "" {
		v["error"] = j.Error
	}
	return v
}
