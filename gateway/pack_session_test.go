package gateway

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestPackSession: a session on a pack surface negotiates the protocol
// version, answers ping and tools/list from the agent's view, and refuses
// what a pack surface does not serve.
func TestPackSession(t *testing.T) {
	t.Parallel()
	g := openYAML(t, adminWorkspace, map[string]string{"READER": "reader-token-0123456789"})
	c := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/json-tools", "reader-token-0123456789"}
	for asked, want := range map[string]string{"2025-03-26": "2025-03-26", "1999-01-01": mcpwire.LegacyVersions()[0], "": mcpwire.LegacyVersions()[0]} {
		init := responseTo(t, c.post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+asked+`","capabilities":{}}}`, nil).Body.Bytes(), "1")
		if string(jsonrpc.Field(init, "protocolVersion")) != `"`+want+`"` || !strings.Contains(string(init), `"serverInfo":{"name":"toolgate/json-tools","version":"dev"}`) {
			t.Errorf("initialize asking %q: %s", asked, init)
		}
	}
	sid := c.session()
	if pong := responseTo(t, c.post(sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil).Body.Bytes(), "2"); string(pong) != `{}` {
		t.Errorf("ping: %s", pong)
	}
	list := responseTo(t, c.post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, nil).Body.Bytes(), "3")
	if string(list) != string(g.view("reader", "json-tools").list) {
		t.Errorf("tools/list %s is not the agent's view", list)
	}
	w := c.post(sid, `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`, nil)
	if m, err := jsonrpc.ParseMessage(bytesOfResponse(w.Body.Bytes())); err != nil || jsonrpc.ParseError(m.Error).Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("prompts/list: %s", w.Body)
	}
}

func TestInitializeResult(t *testing.T) {
	t.Parallel()
	g := &Gateway{version: "1.2.3"}
	if got := string(g.initializeResult("2025-06-18", "a<b")); got != `{"capabilities":{"tools":{"listChanged":true}},"protocolVersion":"2025-06-18","serverInfo":{"name":"toolgate/a<b","version":"1.2.3"}}` {
		t.Errorf("initializeResult = %s", got)
	}
}
