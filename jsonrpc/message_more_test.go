package jsonrpc

import (
	"strings"
	"testing"
)

// TestParseMessageRefusals: what a peer could send to make two readers
// disagree on the method or id is refused, with a message saying what to
// send instead.
func TestParseMessageRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, err string }{
		{``, "expected a JSON object"},
		{`{"jsonrpc":"1.0","id":1,"method":"x"}`, `"jsonrpc" must be "2.0"`},
		{`{"id":1,"method":"x"}`, `"jsonrpc": "2.0" is missing`},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, "id must be a string or a number"},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, "id must be a string or a number"},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, "method must be a string"},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, "must not be empty"},
		{`{"jsonrpc":"2.0","id":1,"method":"a","Method":"b"}`, `differ only in case`},
		{`{"jsonrpc":"2.0","id":1,"method":"a","ID":2}`, `differ only in case`},
		{`{"jsonrpc":"2.0","id":1,"Method":"b"}`, `"Method" differs only in case from "method"`},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`, "not a valid JSON-RPC message"},
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1,"x":2}}`, "not a valid JSON-RPC message"},
		{`{"jsonrpc":"2.0","id":1}`, "no method, and no id with result or error"},
		{`{"jsonrpc":"2.0","method":"x\u0000y"}` + "x", "not a valid"},
	}
	for _, c := range cases {
		if _, err := ParseMessage([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.in, err, c.err)
		}
	}
	// Unknown members are dropped on re-encoding.
	m, err := ParseMessage([]byte(` {"jsonrpc":"2.0","id":"x","method":"m","extra":[1]} `))
	if err != nil || string(m.Encode()) != `{"jsonrpc":"2.0","id":"x","method":"m"}` {
		t.Errorf("%v %s", err, m.Encode())
	}
}

func TestMessageHelpers(t *testing.T) {
	t.Parallel()
	if IDKey([]byte(" 1 ")) != "1" || IDKey([]byte(`"1"`)) == IDKey([]byte("1")) {
		t.Error("IDKey")
	}
	if HasID(nil) || HasID([]byte("null")) || !HasID([]byte("0")) {
		t.Error("HasID")
	}
	if got := string(Notification("notifications/initialized", nil)); got != `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
		t.Errorf("Notification = %s", got)
	}
	if got := string((&Message{Result: []byte(`{}`)}).Encode()); got != `{"jsonrpc":"2.0","id":null,"result":{}}` {
		t.Errorf("id-less response = %s", got)
	}
	if got := string((&Message{ID: IntID(1), Method: "m"}).AppendEncode([]byte("> "))); got != `> {"jsonrpc":"2.0","id":1,"method":"m"}` {
		t.Errorf("AppendEncode = %s", got)
	}
	resp := []byte(`{"jsonrpc":"2.0","id":"7","result":{}}`)
	if !IsResponseTo(resp, []byte(`"7"`)) || IsResponseTo(resp, []byte(`7`)) || IsResponseTo([]byte(`{"jsonrpc":"2.0","id":"7","method":"x"}`), []byte(`"7"`)) || IsResponseTo([]byte("junk"), []byte("1")) {
		t.Error("IsResponseTo")
	}
	if string(Quote("a\"b")) != `"a\"b"` {
		t.Error("Quote")
	}
	if (&Message{ID: IntID(1), Method: "x"}).Kind() != KindRequest || (&Message{}).Kind() != KindInvalid || (&Message{ID: IntID(1)}).Kind() != KindInvalid {
		t.Error("Kind")
	}
}
