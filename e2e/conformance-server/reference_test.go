package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

func likeReference(g *guard) { g.likeRef = true }

// TestListOnlyModern: a DiscoverResult's supportedVersions and an
// UnsupportedProtocolVersionError's supported list are cut; another
// error naming versions, and any other result, pass unchanged.
func TestListOnlyModern(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{}}}`, `{"id":1,"jsonrpc":"2.0","result":{"capabilities":{},"supportedVersions":["2026-07-28"]}}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":["2026-07-28","2025-11-25"],"requested":"1999-01-01"}}}`, `{"error":{"code":-32022,"data":{"requested":"1999-01-01","supported":["2026-07-28"]},"message":"x"},"id":1,"jsonrpc":"2.0"}`},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x","data":{"supported":["2025-11-25"]}}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x","data":{"supported":["2025-11-25"]}}}`},
		{`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"supportedVersions"}]}}`, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"supportedVersions"}]}}`},
		{`not json "supportedVersions"`, `not json "supportedVersions"`},
	}
	for _, c := range cases {
		if got := string(listOnlyModern([]byte(c.in))); got != c.want {
			t.Errorf("listOnlyModern(%s)\n = %s\nwant %s", c.in, got, c.want)
		}
	}
}

// TestLikeReferenceHTTP: with -like-reference the both-era server's
// discover (and its refusal of an unknown version) lists only 2026-07-28,
// initialize is served all the same, and
// subscriptions/listen is newline-delimited JSON under application/json:
// the acknowledgement arrives while the body is open, a change made on
// another request arrives as the next line.
func TestLikeReferenceHTTP(t *testing.T) {
	t.Parallel()
	s, g, err := newServer(eraBoth)
	if err != nil {
		t.Fatal(err)
	}
	likeReference(&g)
	srv := httptest.NewServer(g.wrap(server.NewStreamableHTTPServer(s, server.WithStateful(true))))
	defer srv.Close()
	post := func(method, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if strings.Contains(body, "2026-07-28") {
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", method)
			if method == "tools/call" {
				req.Header.Set("Mcp-Name", "test_trigger_tool_change")
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	decode := func(resp *http.Response) map[string]any {
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	d := decode(post("server/discover", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta(`{}`)+`}}`))
	if got := mustJSON(d["result"].(map[string]any)["supportedVersions"]); got != `["2026-07-28"]` {
		t.Errorf("discover lists %s, want only 2026-07-28", got)
	}
	old := strings.ReplaceAll(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta(`{}`)+`}}`, "2026-07-28", "2099-01-01")
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(old))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2099-01-01")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if e := decode(resp)["error"]; !strings.Contains(mustJSON(e), `"supported":["2026-07-28"]`) {
		t.Errorf("an unknown version refused with %s, want it to list only 2026-07-28 as discover does", mustJSON(e))
	}
	init := decode(post("initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if v := init["result"].(map[string]any)["protocolVersion"]; v != "2025-11-25" {
		t.Errorf("initialize: %v", init)
	}

	listen := post("subscriptions/listen", `{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta(`{}`)+`}}`)
	defer listen.Body.Close()
	if ct := listen.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("listen answered as %q, want application/json", ct)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(listen.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the listen body ended before %s", what)
			}
			return l
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s line while the body is open", what)
		}
		return ""
	}
	if ack := next("acknowledgement"); !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, `"sub"`) {
		t.Errorf("first line %s", ack)
	}
	decode(post("tools/call", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_trigger_tool_change","arguments":{},`+meta(`{}`)+`}}`))
	if ch := next("change"); !strings.Contains(ch, "notifications/tools/list_changed") {
		t.Errorf("second line %s", ch)
	}
}

// TestLikeReferenceStdio: over stdio too, discover lists only 2026-07-28
// while initialize is served.
func TestLikeReferenceStdio(t *testing.T) {
	t.Parallel()
	p := startStdio(t, eraBoth, likeReference)
	r, code := p.call("server/discover", meta(`{}`))
	if code != 0 || mustJSON(r["supportedVersions"]) != `["2026-07-28"]` {
		t.Errorf("discover: %d %v", code, r)
	}
	r, code = p.call("initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}`)
	if code != 0 || r["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize: %d %v", code, r)
	}
}
