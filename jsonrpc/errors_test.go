package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestErrorObject(t *testing.T) {
	t.Parallel()
	if got := string(ErrorObject(CodeInvalidParams, `bad "x"`)); got != `{"code":-32602,"message":"bad \"x\""}` {
		t.Errorf("ErrorObject = %s", got)
	}
	cases := []struct {
		id   json.RawMessage
		want string
	}{
		{IntID(4), `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}`},
		{nil, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`},
		{json.RawMessage("null"), `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`},
	}
	for _, c := range cases {
		if got := string(ErrorResponse(c.id, CodeMethodNotFound, "no")); got != c.want {
			t.Errorf("ErrorResponse(%s) = %s", c.id, got)
		}
	}
}

func TestParseError(t *testing.T) {
	t.Parallel()
	e := ParseError(json.RawMessage(`{"code":-32000,"message":"down","data":{"why":1}}`))
	if e.Code != CodeUnavailable || e.Error() != "down" || string(e.Data) != `{"why":1}` {
		t.Errorf("%+v", e)
	}
	// A malformed error object reads as code 0 with its raw text.
	if e := ParseError(json.RawMessage(`"oops"`)); e.Code != 0 || e.Message != `"oops"` {
		t.Errorf("malformed: %+v", e)
	}
}
