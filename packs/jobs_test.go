package packs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/workspace"
)

// startJob prepares argv as a one-command pack and starts it as owner's job.
func startJob(t *testing.T, m *Jobs, r *Runner, owner string, dir string, argv ...string) JobInfo {
	t.Helper()
	c := command("job", argv...)
	c.Cwd = dir
	inv, err := r.Prepare(packOf(c), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := m.Start(owner, inv, nil)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return info
}

// waitEnded polls until owner's job has ended and returns it.
func waitEnded(t *testing.T, m *Jobs, owner, id string) JobInfo {
	t.Helper()
	var info JobInfo
	waitFor(t, 10*time.Second, "job "+id+" did not end", func() bool {
		var err error
		info, err = m.Get(owner, id)
		if err != nil {
			t.Fatal(err)
		}
		return info.State != JobRunning
	})
	return info
}

// readAll pages through a stream with a small page size.
func readAll(t *testing.T, m *Jobs, owner, id string, s Stream, page int) (string, int) {
	t.Helper()
	var b strings.Builder
	var off int64
	pages := 0
	for {
		p, err := m.Logs(owner, id, s, off, page)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		b.WriteString(p.Data)
		if p.Next == off && p.Done {
			return b.String(), pages
		}
		if p.Next == off {
			t.Fatalf("page at %d made no progress and is not done", off)
		}
		off = p.Next
	}
}

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	var mu sync.Mutex
	var ends []JobInfo
	m := NewJobs(r, JobsOptions{OnEnd: func(i JobInfo) { mu.Lock(); ends = append(ends, i); mu.Unlock() }})
	dir := t.TempDir()
	started := time.Now()
	info := startJob(t, m, r, "alice", dir, "sh", "-c",
		"echo one; echo warn >&2; while [ ! -e proceed ]; do sleep 0.02; done; echo two; echo three")
	if time.Since(started) > 2*time.Second || info.State != JobRunning || !strings.HasPrefix(info.ID, "job-") {
		t.Fatalf("Start = %+v after %v; want a running job at once", info, time.Since(started))
	}
	// Output is readable while the job still runs.
	waitFor(t, 5*time.Second, "first line never showed in the logs", func() bool {
		p, err := m.Logs("alice", info.ID, Stdout, 0, 0)
		return err == nil && p.Data == "one\n" && !p.Done
	})
	if got, _ := m.Get("alice", info.ID); got.State != JobRunning {
		t.Fatalf("state = %s before the job may proceed", got.State)
	}
	if err := os.WriteFile(filepath.Join(dir, "proceed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	end := waitEnded(t, m, "alice", info.ID)
	if end.State != JobSucceeded || end.Result == nil || end.Result.ExitCode != 0 || end.Ended.IsZero() || end.StdoutBytes != 14 {
		t.Fatalf("ended = %+v, result %+v", end, end.Result)
	}
	out, pages := readAll(t, m, "alice", info.ID, Stdout, 3)
	if out != "one\ntwo\nthree\n" || pages < 5 {
		t.Errorf("stdout paged by 3 = %q in %d pages", out, pages)
	}
	if errOut, _ := readAll(t, m, "alice", info.ID, Stderr, 0); errOut != "warn\n" {
		t.Errorf("stderr = %q", errOut)
	}
	p, err := m.Logs("alice", info.ID, Stdout, 1000, 0)
	if err != nil || p.Data != "" || !p.Done || p.Offset != 14 {
		t.Errorf("page past the end = %+v, %v", p, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ends) != 1 || ends[0].ID != info.ID || ends[0].State != JobSucceeded {
		t.Errorf("OnEnd calls = %+v, want one for the job", ends)
	}
}

// TestJobOwners: another owner gets ErrNoJob for every operation, exactly
// as for an id that never existed, and its list is empty.
func TestJobOwners(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	m := NewJobs(r, JobsOptions{})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	info := startJob(t, m, r, "alice", t.TempDir(), "sleep", "300")
	for _, id := range []string{info.ID, "job-000000000000000000000000"} {
		if _, err := m.Get("bob", id); !errors.Is(err, ErrNoJob) {
			t.Errorf("bob Get(%s) err = %v", id, err)
		}
		if _, err := m.Logs("bob", id, Stdout, 0, 0); !errors.Is(err, ErrNoJob) {
			t.Errorf("bob Logs(%s) err = %v", id, err)
		}
		if _, err := m.Cancel(context.Background(), "bob", id); !errors.Is(err, ErrNoJob) {
			t.Errorf("bob Cancel(%s) err = %v", id, err)
		}
	}
	if l := m.List("bob"); len(l) != 0 {
		t.Errorf("bob lists %d jobs", len(l))
	}
	if got, err := m.Get("alice", info.ID); err != nil || got.State != JobRunning {
		t.Errorf("alice's job after bob's attempts: %+v, %v", got, err)
	}
	if l := m.List("alice"); len(l) != 1 || l[0].ID != info.ID {
		t.Errorf("alice lists %+v", l)
	}
}

// TestJobCancelKillsGroup: a job whose shell and child both ignore SIGTERM
// is gone, child included, when Cancel returns (SIGKILL after the grace).
func TestJobCancelKillsGroup(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	m := NewJobs(r, JobsOptions{})
	dir := t.TempDir()
	info := startJob(t, m, r, "alice", dir, "sh", "-c", "trap '' TERM; sleep 300 & echo $! > pidfile; wait")
	pid := readPID(t, filepath.Join(dir, "pidfile"))
	end, err := m.Cancel(context.Background(), "alice", info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if end.State != JobCancelled || !strings.Contains(end.Result.Err, "cancelled (requested by its caller)") {
		t.Errorf("after Cancel: state %s, err %q", end.State, end.Result.Err)
	}
	waitFor(t, 5*time.Second, "the job's child survived Cancel", func() bool { return processGone(pid) })
	again, err := m.Cancel(context.Background(), "alice", info.ID)
	if err != nil || again.State != JobCancelled {
		t.Errorf("second Cancel = %s, %v", again.State, err)
	}
}

// TestJobBounds: a job is bounded by its invocation's timeout and output
// cap exactly like a foreground run.
func TestJobBounds(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	m := NewJobs(r, JobsOptions{})
	tests := []struct {
		name    string
		argv    []string
		timeout time.Duration
		max     int64
		want    string
	}{
		{"timeout", []string{"sleep", "300"}, 300 * time.Millisecond, 0, "timed out after 300ms"},
		{"output cap", []string{"yes"}, time.Minute, 1000, "output passed max_output (1000 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := command("job", tt.argv...)
			p := packOf(c)
			p.Timeout = workspace.Duration(tt.timeout)
			p.MaxOutput = workspace.ByteSize(tt.max)
			inv, err := r.Prepare(p, c, nil)
			if err != nil {
				t.Fatal(err)
			}
			info, err := m.Start("alice", inv, nil)
			if err != nil {
				t.Fatal(err)
			}
			end := waitEnded(t, m, "alice", info.ID)
			if end.State != JobFailed || !strings.Contains(end.Result.Err, tt.want) {
				t.Errorf("state %s err %q, want failed with %q", end.State, end.Result.Err, tt.want)
			}
			if tt.max > 0 {
				pg, _ := m.Logs("alice", info.ID, Stdout, 0, MaxLogPage)
				if pg.Kept != tt.max || pg.Dropped != 0 || !end.Result.Truncated {
					t.Errorf("kept %d dropped %d truncated %v; want exactly the cap kept", pg.Kept, pg.Dropped, end.Result.Truncated)
				}
			}
		})
	}
}

// TestJobsClose: closing the manager stops running jobs (process group
// included), reports each end as stopped, and refuses new jobs.
func TestJobsClose(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	var mu sync.Mutex
	var ends []JobInfo
	m := NewJobs(r, JobsOptions{OnEnd: func(i JobInfo) { mu.Lock(); ends = append(ends, i); mu.Unlock() }})
	dir := t.TempDir()
	info := startJob(t, m, r, "alice", dir, "sh", "-c", "sleep 300 & echo $! > pidfile; wait")
	pid := readPID(t, filepath.Join(dir, "pidfile"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(ends) != 1 || ends[0].ID != info.ID || ends[0].State != JobStopped || !strings.Contains(ends[0].Result.Err, "the gateway stopped") {
		t.Errorf("ends reported by Close = %+v", ends)
	}
	mu.Unlock()
	waitFor(t, 5*time.Second, "a job's child outlived Close", func() bool { return processGone(pid) })
	c := command("job", "true")
	inv, _ := r.Prepare(packOf(c), c, nil)
	if _, err := m.Start("alice", inv, nil); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("Start after Close: %v", err)
	}
}

// TestJobLimits: running jobs per owner are capped (other owners are not
// affected), and the oldest finished jobs are forgotten beyond MaxKept.
func TestJobLimits(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	m := NewJobs(r, JobsOptions{MaxRunning: 1, MaxKept: 2})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	dir := t.TempDir()
	long := startJob(t, m, r, "alice", dir, "sleep", "300")
	c := command("job", "true")
	inv, _ := r.Prepare(packOf(c), c, nil)
	if _, err := m.Start("alice", inv, nil); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second running job for alice: %v", err)
	}
	var bobs []string
	for range 3 {
		info, err := m.Start("bob", inv, nil)
		if err != nil {
			t.Fatalf("bob: %v", err)
		}
		waitEnded(t, m, "bob", info.ID)
		bobs = append(bobs, info.ID)
	}
	// The fourth start forgets the oldest of bob's three finished jobs.
	info, err := m.Start("bob", inv, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, m, "bob", info.ID)
	if _, err := m.Get("bob", bobs[0]); !errors.Is(err, ErrNoJob) {
		t.Errorf("oldest finished job still kept: %v", err)
	}
	if _, err := m.Get("bob", bobs[2]); err != nil {
		t.Errorf("a recent finished job was forgotten: %v", err)
	}
	if _, err := m.Get("alice", long.ID); err != nil {
		t.Errorf("alice's running job: %v", err)
	}
}

// TestJobLogsRedacted: a credential printed by a job never appears in any
// page, even when pages cut through it.
func TestJobLogsRedacted(t *testing.T) {
	t.Parallel()
	secret := "s3cr3t-token-value"
	r := newTestRunner(t, map[string]string{"tok": secret})
	m := NewJobs(r, JobsOptions{})
	info := startJob(t, m, r, "alice", t.TempDir(), "echo", "before "+secret+" after")
	waitEnded(t, m, "alice", info.ID)
	for _, page := range []int{1, 5, 7, 11, 0} {
		out, _ := readAll(t, m, "alice", info.ID, Stdout, page)
		if strings.Contains(out, "s3cr") || strings.Contains(out, "value") || !strings.Contains(out, "[REDACTED:tok]") {
			t.Errorf("pages of %d bytes = %q", page, out)
		}
	}
}

// TestJobLogsConcurrent reads a job's logs while it writes them (run under
// -race).
func TestJobLogsConcurrent(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	m := NewJobs(r, JobsOptions{})
	info := startJob(t, m, r, "alice", t.TempDir(), "sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				p, err := m.Logs("alice", info.ID, Stdout, 0, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if p.Done || p.Kept >= DefaultLogPage {
					return
				}
			}
		})
	}
	wg.Wait()
	end := waitEnded(t, m, "alice", info.ID)
	if end.State != JobSucceeded {
		t.Errorf("state %s: %s", end.State, end.Result.Err)
	}
}
