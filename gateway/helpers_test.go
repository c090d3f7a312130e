package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/mcpserve"
)

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

const pipelineWorkspace = `version: 1
command_packs:
  - use: bundled/json-tools
agents:
  - id: reader
    grants: [pack:json-tools]
`

func openTestGateway(t *testing.T, auditPath string) *Gateway {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(pipelineWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Open(context.Background(), ws, Options{Getenv: os.Getenv, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// callPack calls a pack tool through the same entry the transports use,
// and decodes the result.
func callPack(t *testing.T, g *Gateway, agent, surface, member string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	params, err := json.Marshal(map[string]any{"name": member, "arguments": args})
	if err != nil {
		t.Fatal(err)
	}
	raw, rpcErr := g.callTool(context.Background(), agent, surface, json.RawMessage(`1`), params, mcpserve.Client{}, nil, g.packExecutor(agent, g.rev.Load().surfaces[surface]))
	if rpcErr != nil {
		t.Fatalf("JSON-RPC error %s", rpcErr)
	}
	res, err := mcp.ParseCallToolResult((*json.RawMessage)(&raw))
	if err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return res
}

const adminWorkspace = `version: 1
gateway:
  admin_token: {env: ADMIN}
command_packs:
  - use: bundled/json-tools
agents:
  - id: reader
    token: {env: READER}
    grants: [pack:json-tools]
`

func openAdminGateway(t *testing.T, yaml string, env map[string]string) (*Gateway, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return Open(context.Background(), path, Options{Getenv: func(k string) string { return env[k] }})
}

func adminServer(t *testing.T) (*Gateway, *httptest.Server) {
	t.Helper()
	g, err := openAdminGateway(t, adminWorkspace, map[string]string{"ADMIN": "admin-tok", "READER": "reader-tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	srv := httptest.NewServer(g.Handler(HTTPOptions{}))
	t.Cleanup(srv.Close)
	return g, srv
}

// noRedirect keeps 303s visible to the test.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, method, u string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// buildConformanceServer compiles the e2e conformance server, a real MCP
// server to proxy.
func buildConformanceServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "conformance-server")
	if out, err := exec.Command("go", "build", "-o", bin, "../e2e/conformance-server").CombinedOutput(); err != nil {
		t.Fatalf("build conformance server: %v\n%s", err, out)
	}
	return bin
}

// testerToken is the per-agent instance's token in these tests.
const testerToken = "tester-secret-token"

func mcpPost(t *testing.T, cl *http.Client, url, sid, body string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testerToken)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %s: %s", body, resp.Status, b)
	}
	return resp.Header.Get("Mcp-Session-Id"), string(b)
}

func waitForCond(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// initialize posts an initialize with tok and returns the response.
func initialize(t *testing.T, h http.Handler, host, path, tok string) *httptest.ResponseRecorder {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Host = host
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func auditEvents(t *testing.T, path string) []audit.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}
