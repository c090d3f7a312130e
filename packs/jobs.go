package packs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Bounds of the background job manager when JobsOptions leaves them zero.
const (
	// DefaultMaxRunningJobs is how many background jobs one owner may have
	// running at once: each is a process group holding up to two output
	// caps of memory.
	DefaultMaxRunningJobs = 4
	// DefaultMaxKeptJobs is how many finished jobs per owner stay readable
	// (status and logs) before the oldest is forgotten.
	DefaultMaxKeptJobs = 16
	// DefaultLogPage is how many bytes one Logs call returns when the
	// caller names no limit; MaxLogPage is the most it ever returns.
	DefaultLogPage = 16 << 10
	MaxLogPage     = 64 << 10
)

// ErrNoJob is returned for a job id that does not exist, was forgotten, or
// belongs to another owner: the answers are identical, so an owner learns
// nothing about other owners' jobs.
var ErrNoJob = errors.New("no such job; job ids are returned by the command that started the job, and only its own caller can see it")

// JobState is where a background job is in its life.
type JobState string

// The states of a job. Every state but JobRunning is final.
const (
	JobRunning   JobState = "running"
	JobSucceeded JobState = "succeeded"
	JobFailed    JobState = "failed"
	JobCancelled JobState = "cancelled"
	// JobStopped means the gateway shut down while the job ran: its tree
	// was terminated like a cancelled job's.
	JobStopped JobState = "stopped"
)

// Stream names one output stream of a job.
type Stream string

// The two streams a job's logs hold.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// JobInfo is a snapshot of one job, safe to hand out.
type JobInfo struct {
	ID, Owner, Pack, Command string
	State                    JobState
	Started                  time.Time
	// Ended is zero while the job runs.
	Ended time.Time
	// Timeout and MaxOutput are the bounds the job runs under.
	Timeout   time.Duration
	MaxOutput int64
	// StdoutBytes and StderrBytes count what the job has printed so far,
	// kept or not.
	StdoutBytes, StderrBytes int64
	// Result is the finished run (nil while running); its Stdout is empty,
	// since the output stays in the job's logs.
	Result *Result
	// Tag is the caller's own label, passed to Start and kept untouched
	// (the gateway keeps the call's audit identity in it).
	Tag any
}

// LogPage is one bounded read of a job's output stream.
type LogPage struct {
	Stream Stream
	// Offset is where Data starts and Next where the next page starts, in
	// bytes of the kept stream; Data is redacted, so its length may differ
	// from Next-Offset.
	Offset, Next int64
	Data         string
	// Kept is how many bytes of the stream are stored; Dropped how many
	// more were printed past the output cap and discarded.
	Kept, Dropped int64
	// Done is true when the job has ended and Next reached Kept: there is
	// nothing more to read.
	Done bool
}

// JobsOptions bound a Jobs manager and say how it reports job ends.
type JobsOptions struct {
	MaxRunning int
	MaxKept    int
	// OnEnd is called once per job, from the job's own goroutine, after
	// it ended and its whole tree is gone (the gateway audits here), also
	// when the command killed the process above it.
	// Close waits for every OnEnd to return.
	OnEnd func(JobInfo)
}

// Jobs runs pack commands declared background: true. A job starts at
// once, runs bounded by its invocation's timeout and output cap exactly as
// a foreground run is, and stays readable by its owner after it ends; every
// lookup is by (owner, id), so owners never see each other's jobs.
type Jobs struct {
	runner *Runner
	opts   JobsOptions

	mu      sync.Mutex
	jobs    map[string]*job
	closing bool
	stopAll chan struct{}
	wg      sync.WaitGroup
}

// job is one background run. Fields after mu are guarded by it; the logs
// guard themselves.
type job struct {
	info   JobInfo
	stdout *jobLog
	stderr *jobLog
	// cancel is closed (once) to ask the run to stop; why says by whom.
	cancel     chan struct{}
	cancelOnce sync.Once
	why        error
	done       chan struct{}
	sink       *cappedSink
}

// NewJobs returns a manager running jobs with r.
func NewJobs(r *Runner, opts JobsOptions) *Jobs {
	if opts.MaxRunning <= 0 {
		opts.MaxRunning = DefaultMaxRunningJobs
	}
	if opts.MaxKept <= 0 {
		opts.MaxKept = DefaultMaxKeptJobs
	}
	return &Jobs{runner: r, opts: opts, jobs: map[string]*job{}, stopAll: make(chan struct{})}
}

// Start launches inv as a background job of owner and returns as soon as
// the process is running. The error is for a job that could not start (too
// many running, program missing, gateway closing).
func (m *Jobs) Start(owner string, inv *Invocation, tag any) (JobInfo, error) {
	name := inv.Pack + ":" + inv.Command
	if len(inv.Argv) == 0 {
		return JobInfo{}, fmt.Errorf("command %s: empty argv", name)
	}
	if inv.WriteTo != "" {
		return JobInfo{}, fmt.Errorf("command %s: a background command cannot use output.write_to; declare it without background: true", name)
	}
	path, err := lookPathIn(inv.Argv[0], envValue(inv.Env, "PATH"), inv.Dir)
	if err != nil {
		return JobInfo{}, fmt.Errorf("command %s cannot start: program %w", name, err)
	}
	id, err := newJobID()
	if err != nil {
		return JobInfo{}, fmt.Errorf("command %s: job id: %w", name, err)
	}
	limit := inv.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	timeout := inv.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	j := &job{
		stdout: &jobLog{max: limit},
		stderr: &jobLog{max: limit},
		cancel: make(chan struct{}),
		done:   make(chan struct{}),
	}
	j.sink = newCappedSink(j.stdout, limit)

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return JobInfo{}, fmt.Errorf("command %s not started: the gateway is shutting down", name)
	}
	if n := m.running(owner); n >= m.opts.MaxRunning {
		return JobInfo{}, fmt.Errorf("command %s not started: %d background jobs are already running for this caller (the limit); wait for one to end or cancel it with job-cancel", name, n)
	}
	p, err := m.runner.start(path, inv)
	if err != nil {
		return JobInfo{}, fmt.Errorf("command %s cannot start: %w", name, err)
	}
	j.info = JobInfo{
		ID: id, Owner: owner, Pack: inv.Pack, Command: inv.Command,
		State: JobRunning, Started: p.started,
		Timeout: timeout, MaxOutput: limit, Tag: tag,
	}
	m.jobs[id] = j
	m.forgetOld(owner)
	m.wg.Add(1)
	go m.run(j, inv, p)
	return j.snapshot(), nil
}

// running counts owner's running jobs; m.mu is held.
func (m *Jobs) running(owner string) int {
	n := 0
	for _, j := range m.jobs {
		if j.info.Owner == owner && j.info.State == JobRunning {
			n++
		}
	}
	return n
}

// forgetOld drops owner's oldest finished jobs beyond MaxKept; m.mu is held.
func (m *Jobs) forgetOld(owner string) {
	var ended []*job
	for _, j := range m.jobs {
		if j.info.Owner == owner && j.info.State != JobRunning {
			ended = append(ended, j)
		}
	}
	if len(ended) <= m.opts.MaxKept {
		return
	}
	sort.Slice(ended, func(a, b int) bool { return ended[a].info.Ended.Before(ended[b].info.Ended) })
	for _, j := range ended[:len(ended)-m.opts.MaxKept] {
		delete(m.jobs, j.info.ID)
	}
}

// run waits for the job like Runner.Run waits for a foreground command, and
// records how it ended.
func (m *Jobs) run(j *job, inv *Invocation, p *started) {
	defer m.wg.Done()
	tail := &tailBuffer{max: StderrTailBytes}
	outDone, errDone := make(chan struct{}), make(chan struct{})
	go m.runner.pump(p.stdout, j.sink, outDone)
	go m.runner.pump(p.stderr, io.MultiWriter(j.stderr, tail), errDone)
	r := m.runner
	res := &Result{Argv: make([]string, len(inv.Argv))}
	for i, a := range inv.Argv {
		res.Argv[i] = r.Redact(a)
	}
	timer := time.NewTimer(j.info.Timeout)
	defer timer.Stop()
	var cancelled error
	state := JobSucceeded
	select {
	case <-p.leaderDone:
	case <-timer.C:
		res.TimedOut = true
	case <-j.sink.stop:
	case <-j.cancel:
		cancelled, state = j.why, JobCancelled
	case <-m.stopAll:
		cancelled, state = errors.New("the gateway stopped"), JobStopped
	}
	grace := r.killGrace()
	p.stop(grace)
	awaitReaders(grace, []*os.File{p.stdout, p.stderr}, outDone, errDone)
	res.Duration = time.Since(p.started)
	ex := p.exit()
	res.fill(ex, inv)
	res.Truncated, res.CutBytes = j.sink.cut > 0, j.sink.cut
	res.OutputBytes = j.sink.kept + j.sink.cut
	res.StderrTail = r.Redactor().Cut(string(tail.Bytes()), tail.total > int64(len(tail.Bytes())), false)
	res.Err = r.Redact(joinReasons(failureReasons(res, ex, j.sink, cancelled, j.info.Timeout, j.info.MaxOutput)...))
	if state == JobSucceeded && !res.OK() {
		state = JobFailed
	}
	p.created.settle(state != JobSucceeded)

	m.mu.Lock()
	j.info.State, j.info.Ended, j.info.Result = state, time.Now(), res
	info := j.snapshot()
	m.mu.Unlock()
	close(j.done)
	if m.opts.OnEnd != nil {
		m.opts.OnEnd(info)
	}
}

// snapshot copies the job's info with current output sizes; m.mu is held
// (or the job is not shared yet).
func (j *job) snapshot() JobInfo {
	info := j.info
	kept, dropped := j.stdout.sizes()
	info.StdoutBytes = kept + dropped
	kept, dropped = j.stderr.sizes()
	info.StderrBytes = kept + dropped
	return info
}

// lookup finds owner's job id; m.mu is held.
func (m *Jobs) lookup(owner, id string) (*job, error) {
	j, ok := m.jobs[id]
	if !ok || j.info.Owner != owner {
		return nil, ErrNoJob
	}
	return j, nil
}

// Get returns owner's job id.
func (m *Jobs) Get(owner, id string) (JobInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, err := m.lookup(owner, id)
	if err != nil {
		return JobInfo{}, err
	}
	return j.snapshot(), nil
}

// List returns owner's jobs, oldest first.
func (m *Jobs) List(owner string) []JobInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []JobInfo
	for _, j := range m.jobs {
		if j.info.Owner == owner {
			out = append(out, j.snapshot())
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Started.Before(out[b].Started) })
	return out
}

// Logs reads about limit bytes (DefaultLogPage when 0, at most MaxLogPage)
// of owner's job id's stream from offset. Credential values are redacted:
// page edges move so that none straddles one (a page may start a little
// before offset or run a little past limit to hold a whole value).
func (m *Jobs) Logs(owner, id string, stream Stream, offset int64, limit int) (LogPage, error) {
	if offset < 0 {
		return LogPage{}, fmt.Errorf("offset %d is negative; pass 0 or the next offset of the previous page", offset)
	}
	switch {
	case limit <= 0:
		limit = DefaultLogPage
	case limit > MaxLogPage:
		limit = MaxLogPage
	}
	m.mu.Lock()
	j, err := m.lookup(owner, id)
	running := err == nil && j.info.State == JobRunning
	m.mu.Unlock()
	if err != nil {
		return LogPage{}, err
	}
	var l *jobLog
	switch stream {
	case Stdout, "":
		l, stream = j.stdout, Stdout
	case Stderr:
		l = j.stderr
	default:
		return LogPage{}, fmt.Errorf("stream %q: use stdout or stderr", stream)
	}
	kept, dropped := l.sizes()
	from, next, data := l.page(offset, limit, m.secrets(), running)
	return LogPage{
		Stream: stream, Offset: from, Next: next,
		Data: m.runner.Redactor().Cut(string(data), false, !running && next == kept && dropped > 0),
		Kept: kept, Dropped: dropped,
		Done: !running && next >= kept,
	}, nil
}

// secrets are the credential forms (as printed) that log pages are kept
// from cutting through.
func (m *Jobs) secrets() []string {
	return m.runner.Redactor().Forms()
}

// Cancel stops owner's job id: its whole tree gets SIGTERM, then SIGKILL
// after the runner's kill grace. It returns once the job has ended
// (or ctx is done), with the final state; cancelling an ended job just
// returns it.
func (m *Jobs) Cancel(ctx context.Context, owner, id string) (JobInfo, error) {
	m.mu.Lock()
	j, err := m.lookup(owner, id)
	m.mu.Unlock()
	if err != nil {
		return JobInfo{}, err
	}
	j.cancelOnce.Do(func() {
		j.why = errors.New("requested by its caller")
		close(j.cancel)
	})
	select {
	case <-j.done:
	case <-ctx.Done():
		return m.Get(owner, id)
	}
	return m.Get(owner, id)
}

// Close stops every running job (their trees are terminated and each end
// is reported through OnEnd, state JobStopped) and refuses new
// ones. It returns when all have ended or ctx is done.
func (m *Jobs) Close(ctx context.Context) error {
	m.mu.Lock()
	if !m.closing {
		m.closing = true
		close(m.stopAll)
	}
	m.mu.Unlock()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("background jobs still stopping: %w", ctx.Err())
	}
}

// newJobID returns an unguessable job id.
func newJobID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "job-" + hex.EncodeToString(b[:]), nil
}
