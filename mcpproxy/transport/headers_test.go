package transport

import (
	"net/http"
	"testing"

	"github.com/toolgate/toolgate/mcpwire"
)

// TestStandardHeaders: the headers a 2026-07-28 server checks are taken
// from the bytes being sent, so they cannot disagree with the body.
func TestStandardHeaders(t *testing.T) {
	t.Parallel()
	cfg := &Config{ParamHeaders: func(tool string, params []byte) map[string]string {
		if tool == "deploy" {
			return map[string]string{"Mcp-Param-Env": "prod"}
		}
		return nil
	}}
	cases := []struct {
		msg  string
		want map[string]string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "deploy", "Mcp-Param-Env": "prod", mcpwire.HeaderProtocolVersion: "2026-07-28"}},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}`,
			map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "file:///x", mcpwire.HeaderProtocolVersion: "2026-07-28"}},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, map[string]string{"Mcp-Method": ""}},
		{`not json`, map[string]string{"Mcp-Method": ""}},
	}
	for _, c := range cases {
		h := http.Header{}
		setStandardHeaders(h, []byte(c.msg), cfg)
		for k, v := range c.want {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", c.msg, k, got, v)
			}
		}
	}
}
