package audit

import (
	"runtime"
	"sync"
	"time"
)

// CommitFunc writes one batch of events durably, in order. It returns an
// error per event (nil entries for events written; errs may be nil when all
// were) and an error that fails the whole batch.
type CommitFunc func(evs []*Event) (errs []error, err error)

// ObserveCommit wraps commit so that observe (when not nil) is told how
// long each batch took to write and how many events it held.
func ObserveCommit(commit CommitFunc, observe func(d time.Duration, events int)) CommitFunc {
	if observe == nil {
		return commit
	}
	return func(evs []*Event) ([]error, error) {
		start := time.Now()
		errs, err := commit(evs)
		observe(time.Since(start), len(evs))
		return errs, err
	}
}

// Batcher group-commits appends (docs/security.md): while one caller (the leader)
// runs a commit, the others queue; when it finishes, the next leader takes
// the whole queue as one batch. There is no goroutine of its own and no
// lost wake-up: a leader steps down only after finding the queue empty,
// under the same mutex that queues. The JSONL Log and the PostgreSQL chain
// both append through one.
type Batcher struct {
	commit CommitFunc
	// deferred, when set, writes a batch that holds only deferred events
	// (AppendDeferred); nil writes every batch with commit.
	deferred CommitFunc

	mu      sync.Mutex
	idle    *sync.Cond // signalled when a leader steps down
	queue   []*pending
	leading bool
	closed  bool
	batches int64
	events  int64
}

type pending struct {
	ev       *Event
	deferred bool
	err      error
	done     chan struct{}
}

// NewBatcher returns a Batcher that writes batches with commit.
func NewBatcher(commit CommitFunc) *Batcher {
	b := &Batcher{commit: commit}
	b.idle = sync.NewCond(&b.mu)
	return b
}

// NewDeferringBatcher returns a Batcher that writes batches with commit,
// except those holding only deferred events (AppendDeferred), which it
// writes with deferred: the JSONL Log writes them without waiting for
// fsync.
func NewDeferringBatcher(commit, deferred CommitFunc) *Batcher {
	b := NewBatcher(commit)
	b.deferred = deferred
	return b
}

// Append queues ev and returns once the batch holding it was committed,
// with that event's error. After Close it returns ErrClosed.
func (b *Batcher) Append(ev *Event) error {
	return b.append(&pending{ev: ev, done: make(chan struct{})})
}

// AppendDeferred is Append for an event whose durability may trail its
// return: a batch of such events alone is written with the deferred
// commit (without NewDeferringBatcher: as Append). A batch that holds any
// other event is committed in full, which makes the deferred events
// before it durable too.
func (b *Batcher) AppendDeferred(ev *Event) error {
	return b.append(&pending{ev: ev, deferred: true, done: make(chan struct{})})
}

func (b *Batcher) append(p *pending) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	b.queue = append(b.queue, p)
	if b.leading {
		b.mu.Unlock()
		<-p.done
		return p.err
	}
	b.leading = true
	for len(b.queue) > 0 {
		batch := b.queue
		b.queue = nil
		b.mu.Unlock()
		b.run(batch)
		if len(batch) > 1 {
			// The writers just woken usually append again at once; letting
			// them queue before looking keeps the next batch whole instead
			// of alternating one lone event with everyone else.
			runtime.Gosched()
		}
		b.mu.Lock()
		b.batches++
		b.events += int64(len(batch))
	}
	b.leading = false
	b.idle.Broadcast()
	b.mu.Unlock()
	return p.err
}

func (b *Batcher) run(batch []*pending) {
	evs := make([]*Event, len(batch))
	for i, p := range batch {
		evs[i] = p.ev
	}
	commit := b.commit
	if b.deferred != nil && allDeferred(batch) {
		commit = b.deferred
	}
	errs, err := commit(evs)
	for i, p := range batch {
		switch {
		case err != nil:
			p.err = err
		case i < len(errs):
			p.err = errs[i]
		}
		close(p.done)
	}
}

func allDeferred(batch []*pending) bool {
	for _, p := range batch {
		if !p.deferred {
			return false
		}
	}
	return true
}

// Close refuses new appends and waits for the batch in progress (and the
// queue behind it) to be committed.
func (b *Batcher) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for b.leading {
		b.idle.Wait()
	}
}

// Stats returns how many batches and events were committed; their ratio
// is the average batch size.
func (b *Batcher) Stats() (batches, events int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.batches, b.events
}

// QueueLen reports the events waiting behind the batch in progress and
// whether one is in progress (for tests and metrics).
func (b *Batcher) QueueLen() (queued int, leading bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue), b.leading
}
