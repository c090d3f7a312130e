package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkProxyCall is one proxied tools/call (echo) end to end in
// process: HTTP in, decide, audit, stdio server round trip, HTTP out.
func BenchmarkProxyCall(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "conformance-server")
	if out, err := execGoBuild(bin); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	dir := b.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	_ = os.WriteFile(ws, []byte(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: conf
    command: [`+bin+`, -stdio]
    effects: {echo: read}
agents:
  - id: tester
    grants: [tool:conf:echo]
`), 0o644)
	g, err := Open(context.Background(), ws, Options{Getenv: os.Getenv})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	srv := httptest.NewServer(g.Handler(HTTPOptions{Agent: "tester"}))
	defer srv.Close()
	url := srv.URL + "/mcp/conf"
	post := func(sid, body string) string {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 4096)
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
		return resp.Header.Get("Mcp-Session-Id")
	}
	sid := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`)
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.ResetTimer()
	for range b.N {
		post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	}
}
