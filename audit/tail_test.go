package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func collect(t *testing.T, path string, opts TailOptions) ([]string, error) {
	t.Helper()
	var got []string
	err := Tail(context.Background(), path, opts, func(r Record) error {
		if !strings.HasPrefix(string(r.Raw), `{"seq":`) || r.Event.Seq != int64(r.Line) {
			t.Errorf("record line %d: raw %q seq %d", r.Line, r.Raw, r.Event.Seq)
		}
		got = append(got, r.Event.Reason)
		return nil
	})
	return got, err
}

func TestTailFilters(t *testing.T) {
	t.Parallel()
	// writeChain: agent-0 on even i, decisions cycle allow, deny, approval.
	path, _ := writeChain(t, 12)
	tests := []struct {
		name string
		opts TailOptions
		want []string
	}{
		{"all", TailOptions{}, []string{"event 0", "event 1", "event 2", "event 3", "event 4", "event 5", "event 6", "event 7", "event 8", "event 9", "event 10", "event 11"}},
		{"last 3", TailOptions{Last: 3}, []string{"event 9", "event 10", "event 11"}},
		{"last more than there are", TailOptions{Last: 50, Filter: Filter{Decision: "deny"}}, []string{"event 1", "event 4", "event 7", "event 10"}},
		{"agent", TailOptions{Filter: Filter{Agent: "agent-1"}}, []string{"event 1", "event 3", "event 5", "event 7", "event 9", "event 11"}},
		{"agent and decision, last 2", TailOptions{Last: 2, Filter: Filter{Agent: "agent-0", Decision: "allow"}}, []string{"event 0", "event 6"}},
		{"nothing matches", TailOptions{Filter: Filter{Agent: "nobody"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := collect(t, path, tt.opts)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestTailTruncatedAndMissing(t *testing.T) {
	t.Parallel()
	path, data := writeChain(t, 3)
	if err := os.WriteFile(path, data[:len(data)-10], 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := collect(t, path, TailOptions{})
	if len(got) != 2 || err == nil || !strings.Contains(err.Error(), "line 3 is truncated") {
		t.Errorf("got %q, %v; want the 2 whole events and an error about line 3", got, err)
	}
	if _, err := collect(t, filepath.Join(t.TempDir(), "none.jsonl"), TailOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	boom := errors.New("stop")
	if err := Tail(context.Background(), path, TailOptions{}, func(Record) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("emit error: %v", err)
	}
}

// TestTailFollow appends while Tail follows, including a line written in two
// pieces, and stops Tail by cancelling its context.
func TestTailFollow(t *testing.T) {
	t.Parallel()
	path, _ := writeChain(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recs := make(chan Record, 16)
	done := make(chan error, 1)
	go func() {
		done <- Tail(ctx, path, TailOptions{Last: 1, Follow: true, Poll: 5 * time.Millisecond, Filter: Filter{Agent: "agent-1"}},
			func(r Record) error { recs <- r; return nil })
	}()
	next := func() Record {
		t.Helper()
		select {
		case r := <-recs:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no event from Tail within 10s")
		}
		return Record{}
	}
	if r := next(); r.Event.Reason != "event 3" {
		t.Errorf("first record %q, want the last existing agent-1 event", r.Event.Reason)
	}

	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, ev := range []*Event{{Agent: "agent-0", Reason: "skip"}, {Agent: "agent-1", Reason: "new 1"}} {
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if r := next(); r.Event.Reason != "new 1" || r.Line != 6 {
		t.Errorf("got %q on line %d, want new 1 on line 6", r.Event.Reason, r.Line)
	}

	line, _, err := encodeLine(&Event{Seq: 7, Agent: "agent-1", Reason: "in two pieces"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(line[:20]); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(line[20:]); err != nil {
		t.Fatal(err)
	}
	if r := next(); r.Event.Reason != "in two pieces" || string(r.Raw)+"\n" != string(line) {
		t.Errorf("split line came back as %q", r.Raw)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Tail after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Tail did not stop after cancel")
	}
	if len(recs) != 0 {
		t.Errorf("unexpected extra record %+v", <-recs)
	}
}

func TestTailFollowNoticesShrink(t *testing.T) {
	t.Parallel()
	path, data := writeChain(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Tail(ctx, path, TailOptions{Follow: true, Poll: 5 * time.Millisecond}, func(r Record) error {
			if r.Line == 3 {
				close(started)
			}
			return nil
		})
	}()
	<-started
	if err := os.WriteFile(path, data[:10], 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "shrank") {
			t.Errorf("Tail = %v, want a shrank error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Tail did not notice the log shrinking")
	}
}

// TestVerifyFileWhileAppending: a log that a gateway is appending to verifies
// at every moment, up to the events written when VerifyFile looked. (Linux
// makes one write(2) to a local file atomic for readers anyway; the lock in
// VerifyFile is for filesystems that do not.)
func TestVerifyFileWhileAppending(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const appends = 1000
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for range appends {
			if err := l.Append(&Event{Agent: "a", Reason: strings.Repeat("r", 2000)}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	checks := 0
	for running := true; running; checks++ {
		select {
		case <-done:
			running = false
		default:
		}
		if _, err := VerifyFile(path); err != nil {
			t.Errorf("VerifyFile during appends: %v", err)
			break
		}
	}
	wg.Wait()
	t.Logf("%d verifications while appending", checks)
	rep, err := VerifyFile(path)
	if err != nil || rep.Events != appends {
		t.Errorf("final VerifyFile = %+v, %v", rep, err)
	}
}
