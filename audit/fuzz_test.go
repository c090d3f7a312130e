package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the audit readers: Verify (with and
// without a key) and Open's tail check must not panic, and a log that Open
// accepts must verify after one more Append (a torn tail moved aside,
// anything else refused).
func FuzzReader(f *testing.F) {
	golden, _ := os.ReadFile(filepath.Join("testdata", "golden.jsonl"))
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	f.Add([]byte("{\"seq\":1}\n"))
	f.Add([]byte(""))
	_, pub := testKey(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Verify(bytes.NewReader(data))
		_, _ = VerifyWith(bytes.NewReader(data), VerifyOptions{PublicKey: pub})
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		l, err := Open(path, Options{})
		if err != nil {
			return
		}
		appendErr := l.Append(&Event{Agent: "fuzz", Decision: "deny"})
		l.Close()
		if appendErr != nil {
			t.Fatalf("Open accepted the log but Append failed: %v", appendErr)
		}
		if _, err := VerifyFile(path); err != nil {
			// Open only checks the last line; damage earlier in the file is
			// Verify's to find, and it must name a line.
			if _, ok := AsVerifyError(err); !ok {
				t.Fatalf("verify: %v", err)
			}
		}
	})
}
