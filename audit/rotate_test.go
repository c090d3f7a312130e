package audit

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"
)

// rotatedLog appends n events signed by old, then n by next, then n by old
// again (two writers during a rolling rotation), closing with next.
func rotatedLog(t *testing.T, old, next ed25519.PrivateKey, n int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for _, key := range []ed25519.PrivateKey{old, next, old, next} {
		l, err := Open(path, Options{SigningKey: key, CheckpointEvery: 4})
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			if err := l.Append(&Event{Agent: "a", Decision: "deny"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPreviousKeys: a chain signed partly by a key rotated out verifies
// with the current key and the previous one, not with either alone; the
// old key alone cannot re-sign a rewritten chain or a forged tail.
func TestPreviousKeys(t *testing.T) {
	t.Parallel()
	oldPriv, oldPub := testKey(t)
	newPriv, newPub := testKey(t)
	data := rotatedLog(t, oldPriv, newPriv, 6)
	cases := []struct {
		name     string
		data     []byte
		opts     VerifyOptions
		problem  Problem
		previous bool
	}{
		{"current and previous key", data, VerifyOptions{PublicKey: newPub, PreviousKeys: []ed25519.PublicKey{oldPub}}, "", true},
		{"current key alone", data, VerifyOptions{PublicKey: newPub}, ProblemSignature, false},
		{"old key alone", data, VerifyOptions{PublicKey: oldPub}, ProblemSignature, false},
		{"old key as current, new as previous: the chain ends unsigned by it", data,
			VerifyOptions{PublicKey: oldPub, PreviousKeys: []ed25519.PublicKey{newPub}}, ProblemUnsigned, false},
		{"chain rewritten and signed with the old key only", rotatedLog(t, oldPriv, oldPriv, 6),
			VerifyOptions{PublicKey: newPub, PreviousKeys: []ed25519.PublicKey{oldPub}}, ProblemUnsigned, false},
		{"tail forged and signed with the old key", forgeTail(t, data, oldPriv),
			VerifyOptions{PublicKey: newPub, PreviousKeys: []ed25519.PublicKey{oldPub}}, ProblemUnsigned, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep, err := VerifyWith(bytes.NewReader(c.data), c.opts)
			if c.problem == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.previous && (rep.PreviousKeyCheckpoints == 0 || rep.Checkpoints == 0) {
					t.Fatalf("report %+v: want checkpoints by both keys", rep)
				}
				return
			}
			ve, ok := AsVerifyError(err)
			if !ok || ve.Problem != c.problem {
				t.Fatalf("err = %v, want problem %s", err, c.problem)
			}
		})
	}
}

// forgeTail appends events and a checkpoint signed by key to data, as the
// holder of a leaked old key could.
func forgeTail(t *testing.T, data []byte, key ed25519.PrivateKey) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, Options{SigningKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(&Event{Agent: "forged", Decision: "allow"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
