package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAppendChainVerifies(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 50} {
		_, data := writeChain(t, n)
		rep, err := Verify(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("n=%d: Verify: %v", n, err)
		}
		if rep.Events != n || rep.LastSeq != int64(n) {
			t.Errorf("n=%d: report %+v", n, rep)
		}
		if n > 0 {
			ls := lines(data)
			if !bytes.Contains(ls[len(ls)-1], []byte(rep.LastHash)) || !bytes.Contains(ls[0], []byte(`"prev":""`)) {
				t.Errorf("n=%d: last hash %s not on the last line, or first prev not genesis", n, rep.LastHash)
			}
		}
	}
}

func TestAppendFillsTimeInUTC(t *testing.T) {
	t.Parallel()
	l, _ := openSynced(t)
	before := time.Now()
	ev := &Event{Agent: "a"}
	if err := l.Append(ev); err != nil {
		t.Fatal(err)
	}
	if ev.Time.Location() != time.UTC || ev.Time.Before(before.Add(-time.Second)) || ev.Time.After(time.Now().Add(time.Second)) {
		t.Errorf("time = %v, want now in UTC", ev.Time)
	}
}

// TestReopenContinuesChain covers a restart: a new Log reads the tail the
// previous one left, including a last line longer than one read chunk.
func TestReopenContinuesChain(t *testing.T) {
	t.Parallel()
	path, _ := writeChain(t, 3)
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := &Event{Agent: "a", Reason: strings.Repeat("x", 3*tailChunk+17)}
	if err := l.Append(big); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ev := &Event{Agent: "a"}
	if err := l.Append(ev); err != nil {
		t.Fatal(err)
	}
	if ev.Seq != 5 || ev.Prev != big.Hash {
		t.Errorf("after reopen: seq %d prev %s, want 5 and %s", ev.Seq, ev.Prev, big.Hash)
	}
	data, _ := os.ReadFile(path)
	if rep, err := Verify(bytes.NewReader(data)); err != nil || rep.Events != 5 {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}

// TestAppendRefusesDamagedTail: whatever is wrong with the last line, Open
// and an already-open Log's Append refuse rather than chain onto it.
func TestAppendRefusesDamagedTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(data []byte) []byte
		want   string
		// sameSize damage is invisible to a running Log, which re-reads the
		// tail only when the size changed; Open and Verify still catch it.
		sameSize bool
	}{
		{"torn line after an edited one", func(d []byte) []byte {
			d = bytes.Replace(d, []byte(`"reason":"event 2"`), []byte(`"reason":"event X"`), 1)
			return append(d, `{"seq":4,"ti`...)
		}, "a torn last line follows a damaged one", false},
		{"garbage appended", func(d []byte) []byte { return append(d, "{\"seq\":\n"...) }, "no valid hash field", false},
		{"last line edited", func(d []byte) []byte {
			return bytes.Replace(d, []byte(`"reason":"event 2"`), []byte(`"reason":"event X"`), 1)
		}, "edited", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, data := writeChain(t, 3)
			open, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer open.Close()
			if err := os.WriteFile(path, tt.damage(bytes.Clone(data)), 0o600); err != nil {
				t.Fatal(err)
			}
			checkDamaged := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "toolgate audit verify") {
					t.Errorf("%s: err = %v, want ErrDamaged mentioning %q and toolgate audit verify", what, err, tt.want)
				}
			}
			if !tt.sameSize {
				checkDamaged("Append", open.Append(&Event{Agent: "a"}))
			}
			_, err = Open(path, Options{})
			checkDamaged("Open", err)
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, tt.damage(bytes.Clone(data))) {
				t.Error("a refused append changed the file")
			}
		})
	}
}

// TestAppendSeesOtherWriters: two Logs on one file (as two processes would
// be) each notice the other's appends through the size check.
func TestAppendSeesOtherWriters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i, l := range []*Log{a, a, b, a, b, b, a} {
		ev := &Event{Agent: "x"}
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
		if ev.Seq != int64(i+1) {
			t.Fatalf("append %d got seq %d", i, ev.Seq)
		}
	}
	data, _ := os.ReadFile(path)
	if rep, err := Verify(bytes.NewReader(data)); err != nil || rep.Events != 7 {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}

// TestUnwritable uses failures that hold for root too: a parent that is a
// regular file, a directory, and /dev/full (every write fails with ENOSPC).
func TestUnwritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(file, "audit.jsonl"), dir, filepath.Join(dir, "missing", "audit.jsonl")} {
		if l, err := Open(path, Options{}); err == nil {
			l.Close()
			t.Errorf("Open(%s) succeeded", path)
		} else if !strings.Contains(err.Error(), "gateway.audit.path") {
			t.Errorf("Open(%s) error does not say what to fix: %v", path, err)
		}
	}

	if _, err := os.Stat("/dev/full"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no /dev/full: the disk-full case needs it (any Linux has it)")
		}
		t.Skip("no /dev/full on this system")
	}
	l, err := Open("/dev/full", Options{Fsync: true})
	if err != nil {
		t.Fatalf("Open(/dev/full): %v", err)
	}
	defer l.Close()
	ev := &Event{Agent: "a"}
	if err := l.Append(ev); err == nil || !strings.Contains(err.Error(), "write audit log") {
		t.Errorf("Append to /dev/full = %v, want a write error", err)
	}
	if ev.Hash != "" {
		t.Errorf("failed Append set Hash %q", ev.Hash)
	}
}

func TestAppendAfterClose(t *testing.T) {
	t.Parallel()
	l, err := Open(filepath.Join(t.TempDir(), "a.jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(&Event{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close = %v, want ErrClosed", err)
	}
	if err := l.Append(nil); err == nil {
		t.Error("Append(nil) succeeded")
	}
}

func TestOpenCreatesPrivateFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("mode %v: the audit holds argv and must not be world-readable", st.Mode().Perm())
	}
}
