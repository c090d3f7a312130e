package jsonrpc

import (
	"bytes"
	"testing"
)

// FuzzParseMessage drives the HTTP front's and stdio's parse of every
// client message: it never panics, and whatever it accepts re-encodes to a
// message that parses to the same envelope (what the relay forwards is
// what was parsed).
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":null,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"a","Method":"b"}`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMessage(data)
		if err != nil {
			return
		}
		again, err := ParseMessage(m.Encode())
		if err != nil {
			t.Fatalf("re-encoding of %q does not parse: %v", data, err)
		}
		sameID := IDKey(again.ID) == IDKey(m.ID) || !HasID(again.ID) && !HasID(m.ID) // "id": null is no id
		if again.Method != m.Method || !sameID || !bytes.Equal(again.Params, m.Params) ||
			!bytes.Equal(again.Result, m.Result) || !bytes.Equal(again.Error, m.Error) || again.Kind() != m.Kind() {
			t.Fatalf("envelope changed on re-encoding: %q → %q", data, m.Encode())
		}
	})
}
