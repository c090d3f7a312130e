package mcpserve

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
)

func TestMustBeRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","method":"tools/call"}`, true},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
	}
	for _, c := range cases {
		m, err := jsonrpc.ParseMessage([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := mustBeRequest(m); got != c.want {
			t.Errorf("%s: %v", c.body, got)
		}
		if c.want && !strings.Contains(notARequest(m), m.Method+" must be sent as a request") {
			t.Errorf("%s: %s", c.body, notARequest(m))
		}
	}
}
