package audit

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testKey(t testing.TB) (ed25519.PrivateKey, ed25519.PublicKey) {
	t.Helper()
	privPEM, pubPEM, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	priv, err := ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// signedLog writes n events with checkpoints every `every` and closes the
// log (which adds the closing checkpoint).
func signedLog(t *testing.T, priv ed25519.PrivateKey, n, every int) (string, []byte) {
	t.Helper()
	return writeLog(t, Options{SigningKey: priv, CheckpointEvery: every}, n, "")
}

// writeLog writes n events, their reasons starting with reason, to a new
// log opened with opts, closes it and returns its path and bytes.
func writeLog(t *testing.T, opts Options, n int, reason string) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := l.Append(&Event{Agent: "a", Decision: "deny", Reason: reason + strings.Repeat("x", i%7)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// rewrite re-chains the events of data from scratch with recomputed hashes,
// as an attacker without the key can: drop or edit what they like, then
// re-hash. keepCheckpoints keeps the old checkpoint lines (re-hashed).
func rewrite(t *testing.T, data []byte, edit func(*Event, Head) bool) []byte {
	t.Helper()
	var out bytes.Buffer
	head := Head{}
	for _, raw := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var ev Event
		if err := jsonUnmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		if !edit(&ev, head) {
			continue
		}
		lines, _, next := SealBatch(head, []*Event{&ev}, nil, ev.Time)
		out.Write(lines[0].Bytes)
		head = next
	}
	return out.Bytes()
}

func TestSignedCheckpoints(t *testing.T) {
	t.Parallel()
	priv, pub := testKey(t)
	_, otherPub := testKey(t)
	_, data := signedLog(t, priv, 25, 10)
	if n := bytes.Count(data, []byte(`"decision":"checkpoint"`)); n != 3 {
		t.Fatalf("%d checkpoints in 25 events every 10 plus close, want 3 (after seq 10, 21 and the close)", n)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1]
	tests := []struct {
		name      string
		data      []byte
		opts      VerifyOptions
		wantErr   string // "" verifies
		wantChain bool   // verifies without a key (the attack fools a plain chain check)
	}{
		{name: "intact", data: data, opts: VerifyOptions{PublicKey: pub}, wantChain: true},
		{name: "truncated to zero", data: nil, opts: VerifyOptions{PublicKey: pub}, wantErr: "no checkpoint signed", wantChain: true},
		{name: "last lines dropped", data: bytes.Join(lines[:len(lines)-3], nil), opts: VerifyOptions{PublicKey: pub}, wantErr: "are not signed", wantChain: true},
		{name: "last lines dropped, live log allowed", data: bytes.Join(lines[:len(lines)-3], nil), opts: VerifyOptions{PublicKey: pub, AllowUnsignedTail: true}, wantChain: true},
		{name: "another key", data: data, opts: VerifyOptions{PublicKey: otherPub}, wantErr: "not by the given public key", wantChain: true},
		{name: "rewritten from scratch, checkpoints dropped", data: rewrite(t, data, func(ev *Event, _ Head) bool {
			ev.Reason = "forged"
			return ev.Decision != DecisionCheckpoint
		}), opts: VerifyOptions{PublicKey: pub}, wantErr: "no checkpoint signed", wantChain: true},
		{name: "rewritten from scratch, checkpoints kept", data: rewrite(t, data, func(ev *Event, _ Head) bool {
			if ev.Decision != DecisionCheckpoint {
				ev.Reason = "forged"
			}
			return true
		}), opts: VerifyOptions{PublicKey: pub}, wantErr: "the chain was rewritten"},
		{name: "rewritten, checkpoints re-pointed", data: rewrite(t, data, func(ev *Event, head Head) bool {
			if ev.Checkpoint != nil {
				ev.Checkpoint.Hash = head.Hash
			} else {
				ev.Reason = "forged"
			}
			return true
		}), opts: VerifyOptions{PublicKey: pub}, wantErr: "signature does not verify", wantChain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := VerifyWith(bytes.NewReader(tt.data), tt.opts)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("verify: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("verify err = %v, want %q", err, tt.wantErr)
			}
			if _, err := Verify(bytes.NewReader(tt.data)); (err == nil) != tt.wantChain {
				t.Errorf("plain chain check err = %v, want verifying=%v", err, tt.wantChain)
			}
		})
	}
}

// TestCheckpointSurvivesReopen: Close after a reopen does not sign twice,
// and a reopened log keeps counting checkpoints by seq.
func TestCheckpointSurvivesReopen(t *testing.T) {
	t.Parallel()
	priv, pub := testKey(t)
	path, _ := signedLog(t, priv, 5, 4)
	l, err := Open(path, Options{SigningKey: priv, CheckpointEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyFileWith(path, VerifyOptions{PublicKey: pub})
	if err != nil {
		t.Fatal(err)
	}
	// seq 1-4, cp 5, seq 6, close cp 7; the reopen adds nothing.
	if rep.Events != 7 || rep.Checkpoints != 2 || rep.SignedSeq != 6 {
		t.Errorf("report %+v, want 7 events, 2 checkpoints, signed through seq 6", rep)
	}
}

func TestUnfinishedDecisions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	exit := 0
	evs := []*Event{
		{Agent: "a", Action: "command:call:p:one", Decision: "allow", Revision: "r1", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
		{Agent: "a", Action: "command:call:p:two", Decision: "allow"},
		{Agent: "a", Action: "command:call:p:old", Decision: "allow", Exit: &exit},
		{Agent: "a", Action: "command:call:p:denied", Decision: "deny"},
	}
	for _, ev := range evs {
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(&Event{Agent: "a", Action: "command:call:p:one", Decision: "outcome", Of: &evs[0].Seq, Exit: &exit}); err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unfinished) != 1 || rep.Unfinished[0].Seq != evs[1].Seq || rep.Unfinished[0].Action != "command:call:p:two" {
		t.Errorf("unfinished = %+v, want only seq %d (two)", rep.Unfinished, evs[1].Seq)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"revision":"r1","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","approval":null,"prev"`)) ||
		!bytes.Contains(data, []byte(`"of":1,"approval":null,"prev"`)) {
		t.Errorf("new fields not in the expected place:\n%s", data)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func TestParseSigningKey(t *testing.T) {
	t.Parallel()
	privPEM, _, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	fromPEM, err := ParsePrivateKey(privPEM)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone([]byte(fromPEM))
	bad[40] ^= 1
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"pem", privPEM, true},
		{"seed", fromPEM.Seed(), true},
		{"64 bytes", []byte(fromPEM), true},
		{"64 bytes, public half wrong", bad, false},
		{"public key pem", []byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"), false},
		{"short", []byte("0123456789"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, err := ParseSigningKey(tt.data)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && !k.Equal(fromPEM) {
				t.Error("a different key")
			}
		})
	}
}
