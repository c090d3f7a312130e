package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
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
	raw, rpcErr := g.callTool(context.Background(), agent, surface, json.RawMessage(`1`), params, mcpwire.Client{}, nil, g.packExecutor(agent, g.rev.Load().surfaces[surface]))
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
	g, err := openAdminGateway(t, adminWorkspace, map[string]string{"ADMIN": "admin-token-0123456789", "READER": "reader-token-0123456789"})
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

// openYAML opens a gateway on the workspace yaml (in a directory of its
// own, with d.json beside it), env its environment (PATH added).
func openYAML(t *testing.T, yaml string, env map[string]string) *Gateway {
	t.Helper()
	all := map[string]string{"PATH": os.Getenv("PATH")}
	for k, v := range env {
		all[k] = v
	}
	g, err := openAdminGateway(t, yaml, all)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if err := os.WriteFile(filepath.Join(filepath.Dir(g.ws.Path), "d.json"), []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return g
}

// events returns every event of g's audit so far.
func events(t *testing.T, g *Gateway) []audit.Event {
	t.Helper()
	var out []audit.Event
	if err := g.audit.Tail(context.Background(), audit.TailOptions{}, func(r audit.Record) error {
		out = append(out, r.Event)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// openProxyGateway opens a gateway proxying the conformance server over
// stdio as surface conf: agent tester holds the whole server, agent narrow
// only echo, with text at most 8 characters. It answers HTTP as the
// daemon (tokens testerToken and narrow-token-0123456789).
func openProxyGateway(t *testing.T) *Gateway {
	t.Helper()
	bin := buildConformanceServer(t)
	return openYAML(t, `version: 1
mcp_servers:
  - id: conf
    command: [`+bin+`, -stdio]
    permission: open
agents:
  - id: tester
    token: {env: TESTER}
    grants: [server:conf]
  - id: narrow
    token: {env: NARROW}
    grants:
      - op: tool:conf:echo
        param_constraints: {text: {max_length: 8}}
`, map[string]string{"TESTER": testerToken, "NARROW": "narrow-token-0123456789"})
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// responseTo finds the JSON-RPC response with id in an HTTP answer (a JSON
// body, or the data lines of an SSE stream) and returns its result member
// exactly as it was written.
func responseTo(t *testing.T, body []byte, id string) json.RawMessage {
	t.Helper()
	msgs := [][]byte{body}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		msgs = nil
		for _, line := range bytes.Split(body, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				msgs = append(msgs, d)
			}
		}
	}
	for _, b := range msgs {
		if m, err := jsonrpc.ParseMessage(b); err == nil && string(m.ID) == id {
			if m.Result == nil {
				t.Fatalf("response %s is an error: %s", id, b)
			}
			return jsonrpc.Field(b, "result")
		}
	}
	t.Fatalf("no response %s in %s", id, body)
	return nil
}

// mcpClient speaks raw JSON-RPC to one endpoint of an HTTP handler, as a
// client of either era would, with an agent's bearer token.
type mcpClient struct {
	t    *testing.T
	h    http.Handler
	path string
	tok  string
}

// post sends one message (in session sid, when set) and fails the test on
// an HTTP error.
func (c mcpClient) post(sid, body string, hdr map[string]string) *httptest.ResponseRecorder {
	c.t.Helper()
	w := c.send(sid, body, hdr)
	if w.Code != http.StatusOK && w.Code != http.StatusAccepted {
		c.t.Fatalf("POST %s: %d %s", body, w.Code, w.Body)
	}
	return w
}

// send is post whatever the HTTP status.
func (c mcpClient) send(sid, body string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", c.path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+c.tok)
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	c.h.ServeHTTP(w, r)
	return w
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// modern sends a 2026-07-28 request (no session) of method with params
// (a JSON object's members, without braces) and returns the answer.
func (c mcpClient) modern(id, method, name, params string) *httptest.ResponseRecorder {
	c.t.Helper()
	return c.modernWith(id, method, name, params, `{}`)
}

// modernWith is modern from a client declaring capabilities caps.
func (c mcpClient) modernWith(id, method, name, params, caps string) *httptest.ResponseRecorder {
	c.t.Helper()
	if params != "" {
		params += ","
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + meta + `}}`
	hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		hdr["Mcp-Name"] = name
	}
	return c.send("", body, hdr)
}

// modernCall calls tool statelessly and returns the result as written.
func (c mcpClient) modernCall(id, tool, args string) json.RawMessage {
	c.t.Helper()
	return responseTo(c.t, c.modern(id, "tools/call", tool, `"name":"`+tool+`","arguments":`+args).Body.Bytes(), id)
}

// session opens a session (initialize, initialized) and returns its id.
func (c mcpClient) session() string {
	c.t.Helper()
	w := c.post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := w.Header().Get("Mcp-Session-Id")
	c.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	return sid
}

// legacyCall calls tool in a new session and returns the result as
// written.
func (c mcpClient) legacyCall(tool, args string) json.RawMessage {
	c.t.Helper()
	w := c.post(c.session(), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`, nil)
	return responseTo(c.t, w.Body.Bytes(), "2")
}
