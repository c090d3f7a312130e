package audit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

const (
	helperLogEnv   = "TOOLGATE_AUDIT_HELPER_LOG"
	helperIDEnv    = "TOOLGATE_AUDIT_HELPER_ID"
	helperCountEnv = "TOOLGATE_AUDIT_HELPER_COUNT"
)

// TestHelperProcess is not a test: TestMultiProcessAppend re-executes the
// test binary with this test selected and the env set, to get real separate
// processes appending to one log. It waits for stdin to close so that all
// children start appending at the same moment.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperLogEnv)
	if path == "" {
		t.Skip("helper process for TestMultiProcessAppend")
	}
	id := os.Getenv(helperIDEnv)
	n, err := strconv.Atoi(os.Getenv(helperCountEnv))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.Append(&Event{Agent: id, Decision: "allow", Reason: strconv.Itoa(i)}); err != nil {
			t.Fatalf("child %s append %d: %v", id, i, err)
		}
	}
}

// checkWriters reads a verified log and checks that each writer's events are
// all there, in the order that writer appended them. It returns how often
// consecutive lines came from different writers.
func checkWriters(t *testing.T, path string, writers, each int) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := Verify(f)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.Events != writers*each {
		t.Fatalf("%d events, want %d", rep.Events, writers*each)
	}
	next := map[string]int{}
	switches, last := 0, ""
	err = Tail(context.Background(), path, TailOptions{}, func(r Record) error {
		if want := strconv.Itoa(next[r.Event.Agent]); r.Event.Reason != want {
			return fmt.Errorf("line %d: writer %s event %s, want %s", r.Line, r.Event.Agent, r.Event.Reason, want)
		}
		next[r.Event.Agent]++
		if last != "" && r.Event.Agent != last {
			switches++
		}
		last = r.Event.Agent
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		if got := next[fmt.Sprint("w", w)]; got != each {
			t.Errorf("writer w%d: %d events, want %d", w, got, each)
		}
	}
	return switches
}

func TestMultiProcessAppend(t *testing.T) {
	t.Parallel()
	const procs, each = 4, 500
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var cmds []*exec.Cmd
	var gates []io.WriteCloser
	outs := make([]*bytes.Buffer, procs)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperLogEnv+"="+path, helperIDEnv+"="+fmt.Sprint("w", i), helperCountEnv+"="+strconv.Itoa(each))
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		gate, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, gates = append(cmds, cmd), append(gates, gate)
	}
	for _, g := range gates {
		g.Close()
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
	}
	switches := checkWriters(t, path, procs, each)
	t.Logf("%d processes × %d events: one chain, %d switches between writers", procs, each, switches)
}

// TestGoroutineAppend mixes goroutines sharing one Log with a second Log on
// the same file, which locks like another process would.
func TestGoroutineAppend(t *testing.T) {
	t.Parallel()
	const writers, each = 8, 250
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var logs [2]*Log
	for i := range logs {
		l, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		logs[i] = l
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			l := logs[w%2]
			for i := range each {
				if err := l.Append(&Event{Agent: fmt.Sprint("w", w), Reason: strconv.Itoa(i)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	switches := checkWriters(t, path, writers, each)
	t.Logf("%d goroutines × %d events: one chain, %d switches between writers", writers, each, switches)
}
