package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestProxyModern: 2026-07-28 requests to a proxied server — discover
// lists every version toolgate serves and is private, tools/list is the
// agent's own (filtered, narrowed, private), a call passes the pipeline
// and is marked complete, headers that contradict the body are refused
// and audited.
func TestProxyModern(t *testing.T) {
	t.Parallel()
	g := openProxyGateway(t)
	narrow := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/conf", "narrow-token-0123456789"}
	disc := responseTo(t, narrow.modern("1", "server/discover", "", "").Body.Bytes(), "1")
	if string(jsonrpc.Field(disc, "cacheScope")) != `"private"` || string(jsonrpc.Field(disc, "supportedVersions")) != string(mcpwire.AppendVersionList(nil)) {
		t.Errorf("discover %s", disc)
	}
	list := responseTo(t, narrow.modern("2", "tools/list", "", "").Body.Bytes(), "2")
	var tools struct{ Tools []struct{ Name string } }
	_ = json.Unmarshal(list, &tools)
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" || string(jsonrpc.Field(list, "cacheScope")) != `"private"` || string(jsonrpc.Field(list, "resultType")) != `"complete"` {
		t.Errorf("narrow's tools/list %s", list)
	}
	res := narrow.modernCall("3", "echo", `{"text":"ok"}`)
	if !strings.Contains(string(res), `"text":"ok"`) || string(jsonrpc.Field(res, "resultType")) != `"complete"` {
		t.Errorf("echo: %s", res)
	}
	if res := narrow.modernCall("4", "echo", `{"text":"far too long"}`); !strings.Contains(string(res), "DENIED") {
		t.Errorf("echo past its constraint: %s", res)
	}

	tester := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/conf", testerToken}
	tester.modern("5", "tools/list", "", "") // learns which tools mirror headers
	before := len(events(t, g))
	body := `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"test_header_param","arguments":{"region":"eu"},` + modernMeta + `}}`
	w := tester.send("", body, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "test_header_param", "Mcp-Param-Region": "us"})
	if m, err := jsonrpc.ParseMessage(bytesOfResponse(w.Body.Bytes())); err != nil || jsonrpc.ParseError(m.Error).Code != jsonrpc.CodeHeaderMismatch || w.Code != 400 {
		t.Errorf("a header contradicting the body: %s", w.Body)
	}
	if evs := events(t, g)[before:]; len(evs) != 1 || evs[0].Decision != "deny" {
		t.Errorf("the refusal was not audited once: %+v", evs)
	}
}

// bytesOfResponse is the one message of an HTTP answer (JSON, or the data
// line of an SSE stream).
func bytesOfResponse(body []byte) []byte {
	if i := strings.Index(string(body), "data: "); i >= 0 {
		line := string(body[i+len("data: "):])
		if j := strings.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		return []byte(line)
	}
	return body
}

func TestWithMeta(t *testing.T) {
	t.Parallel()
	sub := json.RawMessage(subscriptionMeta(json.RawMessage(`7`)))
	cases := map[string]string{
		`{}`:                        `{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}`,
		`{"a":1,"_meta":{"k":"v"}}`: `{"a":1,"_meta":{"k":"v","io.modelcontextprotocol/subscriptionId":7}}`,
		``:                          `{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}`,
		`[1]`:                       `[1]`,
	}
	for in, want := range cases {
		if got := withMeta(json.RawMessage(in), sub); string(got) != want {
			t.Errorf("withMeta(%s) = %s, want %s", in, got, want)
		}
	}
	note := withSubscription(jsonrpc.Notification("notifications/tools/list_changed", nil), sub)
	if !strings.Contains(string(note), `"io.modelcontextprotocol/subscriptionId":7`) {
		t.Errorf("notification %s", note)
	}
	if resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`); string(withSubscription(resp, sub)) != string(resp) {
		t.Error("a response is not a notification to tag")
	}
}
