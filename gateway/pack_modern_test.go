package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestPackModern: 2026-07-28 requests on a pack surface — discover, the
// agent's own list (private, complete, with a freshness hint), a call
// marked complete, tasks refused without the extension, and what a pack
// surface does not serve.
func TestPackModern(t *testing.T) {
	t.Parallel()
	g := openYAML(t, adminWorkspace, map[string]string{"READER": "reader-token-0123456789"})
	c := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/json-tools", "reader-token-0123456789"}
	disc := responseTo(t, c.modern("1", "server/discover", "", "").Body.Bytes(), "1")
	var d struct {
		Meta              map[string]struct{ Name string } `json:"_meta"`
		CacheScope        string
		ResultType        string
		SupportedVersions []string
		TTLMs             int
	}
	if err := json.Unmarshal(disc, &d); err != nil || d.Meta["io.modelcontextprotocol/serverInfo"].Name != "toolgate/json-tools" || d.CacheScope != "private" ||
		d.ResultType != "complete" || len(d.SupportedVersions) < 2 || d.TTLMs != 300000 {
		t.Errorf("discover %s (%v)", disc, err)
	}
	list := responseTo(t, c.modern("2", "tools/list", "", "").Body.Bytes(), "2")
	if string(list) != string(g.view("reader", "json-tools").modernList) {
		t.Errorf("tools/list %s is not the agent's view", list)
	}
	for _, m := range []string{"cacheScope", "resultType", "ttlMs", "tools"} {
		if jsonrpc.Field(list, m) == nil {
			t.Errorf("tools/list lacks %s", m)
		}
	}
	res := c.modernCall("3", "query", `{"filter":".a","file":"d.json"}`)
	if string(res) != `{"content":[{"type":"text","text":"1\n"}],"structuredContent":{"result":1},"resultType":"complete"}` {
		t.Errorf("query: %s", res)
	}
	w := c.send("", `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"t1",`+modernMeta+`}}`, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get"})
	if !strings.Contains(w.Body.String(), "-32021") || !strings.Contains(w.Body.String(), "io.modelcontextprotocol/tasks") {
		t.Errorf("tasks/get without the extension: %s", w.Body)
	}
	w = c.send("", `{"jsonrpc":"2.0","id":5,"method":"prompts/list","params":{`+modernMeta+`}}`, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/list"})
	if !strings.Contains(w.Body.String(), `"code":-32601`) {
		t.Errorf("prompts/list: %d %s", w.Code, w.Body)
	}
}

func TestDiscoverResult(t *testing.T) {
	t.Parallel()
	got := (&Gateway{}).discoverResult("s")
	if !json.Valid(got) || !strings.Contains(string(got), `"supportedVersions":`+string(mcpwire.AppendVersionList(nil))) || !strings.Contains(string(got), `"io.modelcontextprotocol/tasks":{}`) {
		t.Errorf("discoverResult = %s", got)
	}
}
