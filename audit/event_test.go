package audit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestArgsDigest(t *testing.T) {
	t.Parallel()
	decode := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("decode %s: %v", s, err)
		}
		return m
	}
	// sha256("{}") and sha256(`{"a":1,"b":[true,"x"]}`), computed independently.
	const emptyDigest = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
	tests := []struct {
		name string
		a, b map[string]any
		same bool
		want string
	}{
		{name: "nil is the empty object", a: nil, b: map[string]any{}, same: true, want: emptyDigest},
		{name: "key order and spacing do not matter", a: decode(`{"b":[true,"x"],"a":1}`), b: decode(`{ "a" : 1, "b" : [ true, "x" ] }`), same: true},
		{name: "nested key order does not matter", a: decode(`{"o":{"y":1,"x":2}}`), b: decode(`{"o":{"x":2,"y":1}}`), same: true},
		{name: "a different value differs", a: decode(`{"repo":"a/b"}`), b: decode(`{"repo":"a/c"}`), same: false},
		{name: "array order matters", a: decode(`{"l":[1,2]}`), b: decode(`{"l":[2,1]}`), same: false},
		{name: "number vs string differs", a: decode(`{"n":1}`), b: decode(`{"n":"1"}`), same: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			da, db := ArgsDigest(tt.a), ArgsDigest(tt.b)
			if (da == db) != tt.same {
				t.Errorf("digests %s and %s: equal=%v, want %v", da, db, da == db, tt.same)
			}
			if tt.want != "" && da != tt.want {
				t.Errorf("digest = %s, want %s", da, tt.want)
			}
			if len(da) != 64 || strings.ToLower(da) != da {
				t.Errorf("digest %q is not 64 lowercase hex digits", da)
			}
		})
	}
}

func intp(i int) *int     { return &i }
func i64p(i int64) *int64 { return &i }
func boolp(b bool) *bool  { return &b }
func at(sec int) time.Time {
	return time.Date(2026, 1, 2, 3, 4, sec, 123456789, time.FixedZone("CET", 3600))
}
func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }

// fixedEvents are events with every field set in some combination; their
// encoding is pinned by testdata/golden.jsonl so that a format change, which
// would make existing logs fail to verify, cannot slip in unnoticed.
func fixedEvents() []*Event {
	return []*Event{
		{
			Time: at(1), Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow",
			Reason: "granted by pack:json-tools", Tier: "cautious",
			Payload:    Payload{Provider: "command", Container: "json-tools", Member: "query", Effects: "read"},
			ArgsSHA256: ArgsDigest(map[string]any{"filter": ".a & .b", "input": "<x>"}),
			Argv:       []string{"jq", "-r", ".a & .b", "ünïcode"}, Exit: intp(0), DurationMS: i64p(4),
			OutputBytes: i64p(120), Truncated: boolp(false),
		},
		{
			Time: at(2), Agent: "writer", Action: "mcp:call:memory:store", Decision: "approval",
			Reason: "cautious tier: write needs approval", Tier: "cautious",
			Payload:    Payload{Provider: "mcp", Container: "memory", Member: "store", Effects: "write"},
			ArgsSHA256: ArgsDigest(nil),
		},
		{
			Time: at(3), Agent: "writer", Action: "mcp:call:memory:store", Decision: "approved",
			Reason: "approved by operator", Tier: "cautious",
			Payload:    Payload{Provider: "mcp", Container: "memory", Member: "store", Effects: "write"},
			ArgsSHA256: ArgsDigest(nil), Error: "downstream: connection reset",
			Approval: rawJSON(`{"id":"apr_1", "by":"operator"}`), DurationMS: i64p(31),
		},
		{
			Time: at(4), Agent: "reader", Action: "command:call:github:merge", Decision: "deny",
			Reason: "readonly tier: write denied", Tier: "readonly",
			Payload:    Payload{Provider: "command", Container: "github", Member: "merge", Effects: "write"},
			ArgsSHA256: ArgsDigest(map[string]any{"n": 1}),
		},
	}
}

func TestEncodingGolden(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, ev := range fixedEvents() {
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden.jsonl")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./audit -run TestEncodingGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encoding changed; old logs would no longer verify.\ngot:\n%s\nwant:\n%s", got, want)
	}
	rep, err := Verify(bytes.NewReader(want))
	if err != nil || rep.Events != 4 || rep.LastSeq != 4 {
		t.Errorf("Verify(golden) = %+v, %v; want 4 events", rep, err)
	}
}

func TestEncodedLineShape(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ev := fixedEvents()[1]
	if err := l.Append(ev); err != nil {
		t.Fatal(err)
	}
	line, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(line)
	for _, want := range []string{`{"seq":1,`, `"approval":null`, `"prev":"","hash"`, `"time":"2026-01-02T02:04:02.123456789Z"`, `,"hash":"` + ev.Hash + `"}` + "\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("line lacks %s:\n%s", want, s)
		}
	}
	for _, absent := range []string{`"argv"`, `"exit"`, `"error"`, `"truncated"`} {
		if strings.Contains(s, absent) {
			t.Errorf("line has unset optional field %s:\n%s", absent, s)
		}
	}
	var back Event
	if err := json.Unmarshal(line, &back); err != nil {
		t.Fatal(err)
	}
	if back.Hash != ev.Hash || back.Seq != 1 || back.Agent != ev.Agent || !back.Time.Equal(at(2)) {
		t.Errorf("round trip = %+v", back)
	}
}
