package audit

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestTornLineMovedAside: a crash mid-write leaves a partial last line; the
// next Open (or an already-open Log's next Append) moves it to .torn,
// records the recovery as an event, and the chain verifies again.
func TestTornLineMovedAside(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		tear  func(d []byte) []byte
		alive bool // tear the file under an open Log instead of before Open
	}{
		{"crash mid-line, then Open", func(d []byte) []byte { return d[:len(d)-40] }, false},
		{"only the newline missing, then Open", func(d []byte) []byte { return d[:len(d)-1] }, false},
		{"another process died mid-write", func(d []byte) []byte { return append(d, `{"seq":4,"time":"2026-`...) }, true},
		{"torn first line", func(d []byte) []byte { return d[:30] }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, data := writeChain(t, 3)
			var live *Log
			if tt.alive {
				var err error
				if live, err = Open(path, Options{Fsync: true}); err != nil {
					t.Fatal(err)
				}
				defer live.Close()
			}
			torn := tt.tear(bytes.Clone(data))
			if err := os.WriteFile(path, torn, 0o600); err != nil {
				t.Fatal(err)
			}
			cut := bytes.LastIndexByte(torn, '\n') + 1
			l := live
			if l == nil {
				var err error
				if l, err = Open(path, Options{Fsync: true}); err != nil {
					t.Fatalf("Open of a torn log: %v", err)
				}
				defer l.Close()
			}
			ev := &Event{Agent: "after", Decision: "allow"}
			if err := l.Append(ev); err != nil {
				t.Fatalf("Append after the tear: %v", err)
			}
			rep, err := VerifyFile(path)
			if err != nil {
				t.Fatalf("verify after recovery: %v", err)
			}
			wholeLines := int64(bytes.Count(torn[:cut], []byte("\n")))
			if rep.LastSeq != wholeLines+2 || ev.Seq != wholeLines+2 {
				t.Errorf("last seq %d, event seq %d; want %d (whole lines + recovery + new)", rep.LastSeq, ev.Seq, wholeLines+2)
			}
			kept, err := os.ReadFile(path + TornSuffix)
			if err != nil {
				t.Fatal(err)
			}
			if want := append(bytes.Clone(torn[cut:]), '\n'); !bytes.Equal(kept, want) {
				t.Errorf(".torn holds %q, want %q", kept, want)
			}
			after, _ := os.ReadFile(path)
			if !bytes.HasPrefix(after, torn[:cut]) {
				t.Error("the whole lines before the torn one changed")
			}
			lines := strings.Split(strings.TrimSpace(string(after[cut:])), "\n")
			if len(lines) != 2 || !strings.Contains(lines[0], `"decision":"recovered"`) || !strings.Contains(lines[0], TornSuffix) {
				t.Errorf("lines after the cut = %q, want the recovery event then the new one", lines)
			}
		})
	}
}
