package jsonrpc

import (
	"strings"
	"testing"
)

func TestParseMessageKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		kind Kind
		err  string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, KindRequest, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`, KindRequest, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, KindNotification, ""},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, KindResponse, ""},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"x"}}`, KindResponse, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 0, "batches"},
		{`{"jsonrpc":"2.0","id":null}`, 0, "not a JSON-RPC message"},
		{`"x"`, 0, "expected a JSON object"},
		// A tools/call whose params break the strict rules is read, for
		// callpipe to refuse and audit; anything else is refused here.
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","Name":"b"}}`, KindRequest, ""},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"x":1,"x":2}}}`, KindNotification, ""},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}", KindRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":1,"A":2}}`, 0, "differ only in case"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"x","params":{"a":1,"A":2}}`, 0, "differ only in case"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{},"_meta":{"a":1,"a":2}}`, 0, "duplicate key"},
		{`{"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{"a":1,"A":2}}`, 0, "unpaired surrogate"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"a":1,"A":2}}`, 0, "differ only in case"},
	}
	for _, c := range cases {
		m, err := ParseMessage([]byte(c.in))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || m.Kind() != c.kind {
			t.Errorf("%s: kind %v err %v, want %v", c.in, m.Kind(), err, c.kind)
		}
	}
}

// TestEncodeKeepsRawParts: what the proxy re-frames keeps the bytes of
// params and results exactly, key order and spacing included.
func TestEncodeKeepsRawParts(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"z": 1,  "a":{"$defs":{}}}}`
	m, err := ParseMessage([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	m.ID = []byte("42")
	if got, want := string(m.Encode()), `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"z": 1,  "a":{"$defs":{}}}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFieldsSet(t *testing.T) {
	t.Parallel()
	f, err := ParseFields([]byte(`{"name":"echo","inputSchema":{"type":"object"},"_meta":{"k": [1, 2]}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(f.Set("inputSchema", []byte(`{"type":"object","required":["x"]}`)).Encode())
	want := `{"name":"echo","inputSchema":{"type":"object","required":["x"]},"_meta":{"k": [1, 2]}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestFieldOfBadParams: in params that break the strict rules elsewhere,
// an unambiguous, strictly valid member is still read; an ambiguous or
// invalid one is not.
func TestFieldOfBadParams(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, key, want string }{
		{`{"name":"a","arguments":{"x":1,"X":2},"_meta":{"v":1}}`, "_meta", `{"v":1}`},
		{`{"name":"a","arguments":{"x":1,"X":2}}`, "name", `"a"`},
		{`{"name":"a","Name":"b","_meta":{}}`, "_meta", `{}`},
		{`{"name":"a","Name":"b"}`, "name", ``},
		{`{"Name":"b","name":"a"}`, "name", ``},
		{`{"name":"a","name":"b"}`, "name", ``},
		{`{"Name":"b","x":{"a":1,"a":2}}`, "name", ``},
		{`{"_meta":{"a":1,"a":2},"x":{"b":1,"B":1}}`, "_meta", ``},
		{"{\"name\":\"\xff\",\"x\":{\"b\":1,\"B\":1}}", "name", ``},
		{`{"name":"a","x":{"b":1,"B":1}`, "name", ``},
		{`{"name":"a","x":1}`, "name", `"a"`},
		{`{"name":"a","x":1}`, "y", ``},
	}
	for _, c := range cases {
		if got := string(Field([]byte(c.in), c.key)); got != c.want {
			t.Errorf("Field(%s, %q) = %q, want %q", c.in, c.key, got, c.want)
		}
	}
}

// TestMethodDecoded: a method is read as the JSON string it is, escapes
// decoded, whichever path reads it.
func TestMethodDecoded(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:                              "ping",
		`{"jsonrpc":"2.0","id":1,"method":"pin\u0067"}`:                         "ping",
		`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`:                       "tools/call",
		`{"jsonrpc":"2.0","id":1,"method":"a\"b"}`:                              `a"b`,
		`{"jsonrpc":"2.0","id":1,"method":"\u00e9t\u00e9"}`:                     "été",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":1,"A":2}}`: "tools/call",
	} {
		m, err := ParseMessage([]byte(in))
		if err != nil {
			t.Errorf("ParseMessage(%s): %v", in, err)
		} else if m.Method != want {
			t.Errorf("ParseMessage(%s).Method = %q, want %q", in, m.Method, want)
		}
	}
}
