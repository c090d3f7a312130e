package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// oracleLine is how audit lines were encoded before appendEvent: with
// encoding/json (HTML escaping off). appendEvent must agree byte for byte,
// so that lines (and hashes) written by either, and by the PostgreSQL
// chain, are the same.
func oracleLine(ev *Event) ([]byte, string, error) {
	e := *ev
	e.Hash = ""
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&e); err != nil {
		return nil, "", err
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	line := append(append(append(body[:len(body)-1:len(body)-1], hashField...), hash...), "\"}\n"...)
	return line, hash, nil
}

// hostileStrings are the texts an event may carry from a call: escapes,
// HTML, control characters, invalid UTF-8, line separators, a key-like
// fragment that would forge a field if left unescaped.
var hostileStrings = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnl\nlf\rbs\bff\f",
	"\x00\x01\x1f\x7f", "bad \xff\xfe utf8", "\u2028line\u2029para", "émoji 🎉 中文",
	`","decision":"allow","x":"`, "\xed\xa0\x80 surrogate bytes", strings.Repeat("long ", 200),
}

func TestAppendEventMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	exit, dur, out, trunc, of := 3, int64(12), int64(4096), true, int64(41)
	base := func() *Event {
		return &Event{Seq: 42, Time: time.Date(2026, 7, 28, 9, 30, 1, 123456789, time.UTC), Agent: "reader",
			Action: "mcp:call:srv:echo", Decision: "allow", Reason: "granted", Tier: "cautious",
			Payload:    Payload{Provider: "mcp", Container: "srv", Member: "echo", Effects: "read"},
			ArgsSHA256: ArgsDigest(nil), Prev: strings.Repeat("ab", 32)}
	}
	tests := []struct {
		name string
		mod  func(e *Event)
	}{
		{"decision event", func(*Event) {}},
		{"outcome with every optional field", func(e *Event) {
			e.Argv, e.Exit, e.DurationMS, e.OutputBytes, e.Truncated, e.Error, e.Of = []string{"jq", "-r", ".a"}, &exit, &dur, &out, &trunc, "boom", &of
			e.Revision, e.TraceID = "r7", "4bf92f3577b34da6a3ce929d0e0e4736"
		}},
		{"empty argv is omitted", func(e *Event) { e.Argv = []string{} }},
		{"zero values of pointers are written", func(e *Event) {
			z, zb := int64(0), false
			zi := 0
			e.Exit, e.DurationMS, e.OutputBytes, e.Truncated, e.Of = &zi, &z, &z, &zb, &z
		}},
		{"approval compacted", func(e *Event) { e.Approval = json.RawMessage(" {\"id\" : \"a1\",\n \"by\": [ \"ops\" ] } ") }},
		{"approval null", func(e *Event) { e.Approval = json.RawMessage("null") }},
		{"arguments compacted", func(e *Event) { e.Arguments = json.RawMessage(" {\"path\" : \"a<b>\",\n \"n\": [ 1, 2 ] } ") }},
		{"checkpoint", func(e *Event) {
			e.Decision, e.Checkpoint = DecisionCheckpoint, &Checkpoint{Seq: 41, Hash: strings.Repeat("cd", 32), Key: "ed25519:AAAA", Sig: "c2ln+/=="}
		}},
		{"hash field is ignored", func(e *Event) { e.Hash = "forged" }},
		{"non-UTC time", func(e *Event) { e.Time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -7*3600)) }},
		{"zero time", func(e *Event) { e.Time = time.Time{} }},
		{"negative seq", func(e *Event) { e.Seq = -1 }},
	}
	for i, s := range hostileStrings {
		tests = append(tests, struct {
			name string
			mod  func(e *Event)
		}{"hostile string " + string(rune('a'+i)), func(e *Event) {
			e.Agent, e.Reason, e.Error, e.Revision, e.TraceID = s, s, s, s, s
			e.Payload.Member, e.Action = s, "mcp:call:srv:"+s
			e.Argv = []string{s, "x" + s}
		}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev := base()
			tt.mod(ev)
			want, wantHash, wantErr := oracleLine(ev)
			got, gotHash, gotErr := encodeLine(ev)
			if (wantErr != nil) != (gotErr != nil) {
				t.Fatalf("error = %v, encoding/json's = %v", gotErr, wantErr)
			}
			if !bytes.Equal(got, want) || gotHash != wantHash {
				t.Fatalf("line differs from encoding/json's:\n got %s\nwant %s", got, want)
			}
			if _, ok, match := lineHash(bytes.TrimSuffix(got, []byte("\n"))); !ok || !match {
				t.Fatalf("line does not verify: ok=%v match=%v", ok, match)
			}
		})
	}
}

// TestAppendEventRefusesWhatEncodingJSONRefuses: an event encoding/json
// cannot encode (a year beyond 9999, an approval that is not JSON) is an
// error, never a line.
func TestAppendEventRefusesWhatEncodingJSONRefuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ev   Event
	}{
		{"year 10000", Event{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"negative year", Event{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"approval not JSON", Event{Approval: json.RawMessage(`{"id":`)}},
		{"approval two values", Event{Approval: json.RawMessage(`{} {}`)}},
		{"approval empty", Event{Approval: json.RawMessage{}}},
		{"arguments not JSON", Event{Arguments: json.RawMessage(`{"path":`)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, _, err := oracleLine(&tt.ev); err == nil {
				t.Fatalf("encoding/json accepts it; the case tests nothing")
			}
			if line, _, err := encodeLine(&tt.ev); err == nil {
				t.Fatalf("encoded %s, want an error", line)
			}
		})
	}
}

// TestAppendEventRandomStrings compares with encoding/json over random
// byte strings (any byte, so invalid UTF-8 and every control character).
func TestAppendEventRandomStrings(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("aZ09 \"\\<>&/\t\n\x00\x1f\x7f\xc3\xa9\xe2\x80\xa8\xf0\x9f\x8e\x89\xff\xed\xa0\x80")
	for n := range 2000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			if r.IntN(4) == 0 {
				b[i] = byte(r.IntN(256))
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		ev := &Event{Seq: int64(n), Agent: string(b), Reason: string(b), Argv: []string{string(b)}, Prev: string(b)}
		want, _, _ := oracleLine(ev)
		got, _, err := encodeLine(ev)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("string %q: got %s (%v), want %s", b, got, err, want)
		}
	}
}

// FuzzAppendEvent holds appendEvent to encoding/json for any strings.
func FuzzAppendEvent(f *testing.F) {
	for _, s := range hostileStrings {
		f.Add(s, s, []byte(`{"a":1}`))
	}
	f.Fuzz(func(t *testing.T, agent, reason string, approval []byte) {
		ev := &Event{Seq: 1, Agent: agent, Reason: reason, Argv: []string{agent, reason}, Error: reason, Approval: approval}
		want, wantHash, wantErr := oracleLine(ev)
		got, gotHash, gotErr := encodeLine(ev)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("error = %v, encoding/json's = %v", gotErr, wantErr)
		}
		if wantErr == nil && (!bytes.Equal(got, want) || gotHash != wantHash) {
			t.Fatalf("line differs:\n got %s\nwant %s", got, want)
		}
	})
}
