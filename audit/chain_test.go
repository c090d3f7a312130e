package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// writeChain appends n events to a new log in a temp dir and returns its path
// and bytes.
func writeChain(t *testing.T, n int) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		ev := &Event{Agent: fmt.Sprintf("agent-%d", i%2), Action: "command:call:json-tools:query",
			Decision: []string{"allow", "deny", "approval"}[i%3], Reason: fmt.Sprintf("event %d", i),
			Tier: "cautious", Payload: Payload{Provider: "command", Container: "json-tools", Member: "query", Effects: "read"},
			ArgsSHA256: ArgsDigest(map[string]any{"i": i})}
		if err := l.Append(ev); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if ev.Seq != int64(i+1) || len(ev.Hash) != 64 {
			t.Fatalf("append %d assigned seq %d hash %q", i, ev.Seq, ev.Hash)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// lines splits a log into its lines, each keeping its newline.
func lines(data []byte) [][]byte {
	return bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}
