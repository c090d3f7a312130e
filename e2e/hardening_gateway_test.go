package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The attacks of issue 15 on the gateway itself, against the built binary:
// session floods on a stdio-backed surface, downstream servers that stop
// answering or reading, bodies trickled a byte at a time, bodies a web
// page can send without a preflight, a per-agent instance reached without
// its token, and approval floods.

const hardenToken, hardenOtherToken = "harden-dev-token", "harden-ops-token"

// hardenEnv is the token environment of the hardening workspaces.
var hardenEnv = []string{"DEV_TOKEN=" + hardenToken, "OPS_TOKEN=" + hardenOtherToken}

// hardenInit is a 2025-era initialize request.
const hardenInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"harden","version":"1"}}}`

// httpResult is one raw HTTP exchange.
type httpResult struct {
	status int
	sid    string
	body   string
	header http.Header
}

// postRaw POSTs body to u with a content type (none when empty), a token
// and a session id (each omitted when empty).
func postRaw(t testing.TB, u, contentType, token, sid, body string) httpResult {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return httpResult{status: resp.StatusCode, sid: resp.Header.Get("Mcp-Session-Id"), body: string(b), header: resp.Header}
}

// deleteSession ends a session with DELETE and returns the status.
func deleteSession(t testing.TB, u, token, sid string) int {
	t.Helper()
	req, _ := http.NewRequest("DELETE", u, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestGatewaySessionCap: 40 initializes of one agent on a stdio-backed
// surface start at most max_per_agent server processes; the rest are
// refused 429 before anything starts. Idle sessions expire after idle_ttl
// and their processes are gone; the cap is free again.
func TestGatewaySessionCap(t *testing.T) {
	t.Parallel()
	pids := newPidDir(t)
	const maxPerAgent, attempts = 4, 40
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  sessions: {max_per_agent: %d, idle_ttl: 2s}
mcp_servers:
  - id: stdiosrv
    command: [%s, -stdio, -pids, %s]
    permission: open
    timeout: 5s
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [server:stdiosrv]
`, maxPerAgent, hostileBinary(t), pids))
	d := startDaemon(t, hardenEnv, "-w", ws)
	u := d.base + "/mcp/stdiosrv"
	// The first use of the surface lists its tools (a short-lived probe
	// process or two); settle that before counting.
	first := postRaw(t, u, "application/json", hardenToken, "", hardenInit)
	if first.status != http.StatusOK {
		t.Fatalf("first initialize: %d %s", first.status, first.body)
	}
	if code := deleteSession(t, u, hardenToken, first.sid); code != http.StatusOK {
		t.Fatalf("DELETE: %d", code)
	}
	waitFor(t, 15*time.Second, "probe processes to exit", func() bool { return len(pids.alive()) == 0 })
	before := len(pids.started())
	rssBefore := treeRSSKiB(d.cmd.Process.Pid)

	var mu sync.Mutex
	var ok []string
	var refused []httpResult
	var wg sync.WaitGroup
	start := time.Now()
	for range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := postRaw(t, u, "application/json", hardenToken, "", hardenInit)
			mu.Lock()
			defer mu.Unlock()
			switch r.status {
			case http.StatusOK:
				ok = append(ok, r.sid)
			case http.StatusTooManyRequests:
				refused = append(refused, r)
			default:
				t.Errorf("initialize: HTTP %d %s", r.status, r.body)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	peakAlive := len(pids.alive())
	rssPeak := treeRSSKiB(d.cmd.Process.Pid)
	startedNow := len(pids.started()) - before
	t.Logf("sessions: %d initializes in %s: %d opened, %d refused 429; server processes started %d, running %d (cap %d); RSS toolgate+children %d MB before, %d MB at the cap",
		attempts, took.Round(time.Millisecond), len(ok), len(refused), startedNow, peakAlive, maxPerAgent, rssBefore>>10, rssPeak>>10)
	if len(ok) != maxPerAgent || len(refused) != attempts-maxPerAgent {
		t.Fatalf("want %d opened and %d refused, got %d and %d", maxPerAgent, attempts-maxPerAgent, len(ok), len(refused))
	}
	if startedNow > maxPerAgent || peakAlive > maxPerAgent {
		t.Errorf("%d server processes started, %d running; the cap is %d", startedNow, peakAlive, maxPerAgent)
	}
	for _, r := range refused[:1] {
		if !strings.Contains(r.body, "too many open sessions for this agent on this surface (4, gateway.sessions.max_per_agent)") || r.sid != "" {
			t.Errorf("429 body: %s (session id %q)", r.body, r.sid)
		}
	}
	// The issue saw 25 sessions reach 257 MB; four hostile servers and the
	// gateway stay far below that whatever the attempts.
	if rssPeak > 200<<10 {
		t.Errorf("RSS of toolgate and its children reached %d MB", rssPeak>>10)
	}
	// Each open session has its own live server.
	seen := map[string]bool{}
	for _, sid := range ok {
		r := postRaw(t, u, "application/json", hardenToken, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pid","arguments":{}}}`)
		if r.status != http.StatusOK || !strings.Contains(r.body, `"text":"`) {
			t.Fatalf("pid on session: %d %s", r.status, r.body)
		}
		seen[r.body[strings.Index(r.body, `"text":"`):]] = true
	}
	if len(seen) != maxPerAgent {
		t.Errorf("%d distinct server processes behind %d sessions", len(seen), maxPerAgent)
	}

	// Idle: nobody uses them; after idle_ttl (2s) they close and their
	// processes exit.
	idleFrom := time.Now()
	waitFor(t, 20*time.Second, "idle sessions' processes to exit", func() bool { return len(pids.alive()) == 0 })
	t.Logf("sessions: idle_ttl 2s: all %d server processes gone %s after the last use; processes left 0", maxPerAgent, time.Since(idleFrom).Round(time.Millisecond))
	r := postRaw(t, u, "application/json", hardenToken, ok[0], `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r.status != http.StatusNotFound || !strings.Contains(r.body, "expired") {
		t.Errorf("an expired session: %d %s", r.status, r.body)
	}
	if r := postRaw(t, u, "application/json", hardenToken, "", hardenInit); r.status != http.StatusOK {
		t.Errorf("initialize after expiry: %d %s", r.status, r.body)
	}
}

// TestGatewayCancelledPostNeverAnswered: an HTTP downstream that never
// answers the POST of notifications/cancelled cannot hold a call that
// timed out past its timeout and the cancellation's bound.
func TestGatewayCancelledPostNeverAnswered(t *testing.T) {
	t.Parallel()
	record := filepath.Join(t.TempDir(), "methods")
	srv := startHostileHTTP(t, "-hold-cancelled", "-record", record)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: deaf
    url: `+srv+`
    permission: open
    timeout: 1s
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [server:deaf]
`)
	d := startDaemon(t, hardenEnv, "-w", ws)
	s := rawConnect(t, d.base+"/mcp/deaf", hardenToken)
	const timeout, slack = time.Second, time.Second
	for i := range 3 {
		start := time.Now()
		text, isErr := s.callText("hang", nil)
		took := time.Since(start)
		t.Logf("cancelled never answered: call %d with timeout 1s returned after %s: %s", i+1, took.Round(time.Millisecond), text)
		if !isErr || !strings.Contains(text, "did not answer tools/call within 1s") {
			t.Errorf("hang: %q (isError %v)", text, isErr)
		}
		if took > timeout+slack {
			t.Errorf("the call took %s; its timeout is %s (+%s slack)", took, timeout, slack)
		}
	}
	// The server got each cancellation (and holds its POST for good).
	waitFor(t, 10*time.Second, "3 notifications/cancelled to reach the server", func() bool {
		methods, _ := os.ReadFile(record)
		return strings.Count(string(methods), "notifications/cancelled") == 3
	})
	// The session still works, and ends promptly.
	if text, isErr := s.callText("echo", map[string]any{"text": "still here"}); isErr || !strings.Contains(text, "still here") {
		t.Errorf("echo after the held cancellations: %q", text)
	}
	start := time.Now()
	if code := deleteSession(t, s.url, hardenToken, s.sid); code != http.StatusOK {
		t.Errorf("DELETE: %d", code)
	}
	t.Logf("cancelled never answered: DELETE returned in %s", time.Since(start).Round(100*time.Microsecond))
}

// TestGatewayStdioStopsReading: a stdio downstream that stops reading its
// stdin (and ignores SIGTERM) cannot hold a large call past its timeout,
// nor the session's DELETE, and leaves no process once the gateway exits.
func TestGatewayStdioStopsReading(t *testing.T) {
	t.Parallel()
	pids := newPidDir(t)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: frozen
    command: [%s, -stdio, -ignore-term, -pids, %s]
    permission: open
    timeout: 1s
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [server:frozen]
`, hostileBinary(t), pids))
	d := startDaemon(t, hardenEnv, "-w", ws)
	u := d.base + "/mcp/frozen"
	freeze := func(s *rawSession) {
		t.Helper()
		if text, isErr := s.callText("freeze", nil); isErr || text != "frozen" {
			t.Fatalf("freeze: %q", text)
		}
	}

	// A large call to a server that no longer reads: the write cannot
	// finish (the pipe holds 64 KiB), and its deadline ends it.
	s := rawConnect(t, u, hardenToken)
	freeze(s)
	big := strings.Repeat("x", 512<<10)
	start := time.Now()
	text, isErr := s.callText("echo", map[string]any{"text": big})
	took := time.Since(start)
	t.Logf("stdio stops reading: a 512 KiB call with timeout 1s returned after %s: %s", took.Round(time.Millisecond), text)
	if !isErr || !strings.Contains(text, "stopped reading its input") {
		t.Errorf("large call: %q (isError %v)", text, isErr)
	}
	if took > 4*time.Second {
		t.Errorf("the large call took %s; the timeout is 1s", took)
	}

	// DELETE of a session whose server stopped reading and ignores
	// SIGTERM: answered at once; the process is stopped behind it.
	s2 := rawConnect(t, u, hardenToken)
	pidText, _ := s2.callText("pid", nil)
	var frozenPid int
	if _, err := fmt.Sscan(pidText, &frozenPid); err != nil {
		t.Fatalf("pid: %q", pidText)
	}
	freeze(s2)
	start = time.Now()
	if code := deleteSession(t, u, hardenToken, s2.sid); code != http.StatusOK {
		t.Errorf("DELETE: %d", code)
	}
	took = time.Since(start)
	waitFor(t, 15*time.Second, "the frozen server to be stopped", func() bool { return !procRunning(frozenPid) })
	t.Logf("stdio stops reading: DELETE of the session answered after %s; its frozen server (ignoring SIGTERM) gone after %s",
		took.Round(100*time.Microsecond), time.Since(start).Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("DELETE took %s", took)
	}

	// The gateway stops with frozen servers behind open sessions: they
	// are stopped together (not one grace period after another), and
	// none is left running.
	const frozenAtExit = 6
	for range frozenAtExit {
		freeze(rawConnect(t, u, hardenToken))
	}
	running := len(pids.alive())
	took = stopDaemon(t, d, 60*time.Second)
	left := pids.alive()
	t.Logf("stdio stops reading: gateway exited %s after SIGTERM with %d frozen servers (ignoring SIGTERM) running; server processes left %d (of %d started)",
		took.Round(time.Millisecond), running, len(left), len(pids.started()))
	if running < frozenAtExit {
		t.Errorf("only %d frozen servers ran before SIGTERM: the test proves nothing", running)
	}
	if len(left) != 0 {
		t.Errorf("server processes %v outlived the gateway", left)
	}
	if took > 10*time.Second {
		t.Errorf("the gateway took %s to exit", took)
	}
}

// TestGatewaySlowBody: a request body sent one byte every two seconds is
// cut after body_timeout and the connection closed — whether it declares
// its length or is chunked, and on every path, including those that
// answer without reading the body (a refused content type or Origin, a
// missing token, a GET): net/http would otherwise read the rest of the
// body before answering, as slowly as it is sent.
func TestGatewaySlowBody(t *testing.T) {
	t.Parallel()
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  body_timeout: 3s
  admin_token: {env: TG_ADMIN_TOKEN}
command_packs:
  - use: bundled/json-tools
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [pack:json-tools]
`)
	d := startDaemon(t, append([]string{"TG_ADMIN_TOKEN=" + adminToken}, hardenEnv...), "-w", ws)
	host := strings.TrimPrefix(d.base, "http://")
	const bodyTimeout, slack = 3 * time.Second, 3 * time.Second
	auth := "Authorization: Bearer " + hardenToken + "\r\n"
	for _, c := range []struct {
		name, request string
		chunked       bool
	}{
		{name: "MCP POST", request: "POST /mcp/json-tools", chunked: false},
		{name: "MCP POST chunked", request: "POST /mcp/json-tools", chunked: true},
		{name: "MCP POST text/plain", request: "POST /mcp/json-tools", chunked: false},
		{name: "MCP POST foreign Origin", request: "POST /mcp/json-tools"},
		{name: "MCP POST no token", request: "POST /mcp/json-tools"},
		{name: "MCP GET with a body", request: "GET /mcp/json-tools"},
		{name: "admin approve without token", request: "POST /admin/approvals/x/approve"},
		{name: "healthz with a body", request: "GET /healthz"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := c.request + " HTTP/1.1\r\nHost: " + host + "\r\n"
			switch c.name {
			case "MCP POST text/plain":
				head += "Content-Type: text/plain\r\n" + auth
			case "MCP POST foreign Origin":
				head += "Content-Type: application/json\r\nOrigin: http://attacker.example\r\n" + auth
			case "MCP POST no token", "admin approve without token", "healthz with a body":
				head += "Content-Type: application/json\r\n"
			case "MCP GET with a body":
				head += "Accept: text/event-stream\r\n"
			default:
				head += "Content-Type: application/json\r\n" + auth
			}
			if c.chunked {
				head += "Transfer-Encoding: chunked\r\n\r\n"
			} else {
				head += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(hardenInit))
			}
			if _, err := io.WriteString(conn, head); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			// The reader notes when the answer arrives and when the
			// gateway closes the connection.
			type ending struct {
				answer         string
				answered, shut time.Duration
			}
			ended := make(chan ending, 1)
			go func() {
				var e ending
				br := bufio.NewReader(conn)
				if resp, err := http.ReadResponse(br, nil); err == nil {
					e.answered = time.Since(start)
					b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
					e.answer = fmt.Sprintf("HTTP %d %s", resp.StatusCode, bytes.TrimSpace(b))
				} else {
					e.answer = "no answer: " + err.Error()
				}
				_, _ = io.Copy(io.Discard, br)
				e.shut = time.Since(start)
				ended <- e
			}()
			var sent atomic.Int64
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				tick := time.NewTicker(2 * time.Second)
				defer tick.Stop()
				for i := 0; i < len(hardenInit); i++ {
					b := hardenInit[i : i+1]
					if c.chunked {
						b = "1\r\n" + b + "\r\n"
					}
					if _, err := io.WriteString(conn, b); err != nil {
						return
					}
					sent.Add(1)
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
			select {
			case e := <-ended:
				t.Logf("slow body, %s: one byte every 2s, body_timeout 3s: answered after %s, connection closed after %s, %d bytes sent: %s",
					c.name, e.answered.Round(time.Millisecond), e.shut.Round(time.Millisecond), sent.Load(), firstLine(e.answer))
				if e.shut > bodyTimeout+slack {
					t.Errorf("the connection was held %s; body_timeout is %s", e.shut, bodyTimeout)
				}
				if !strings.Contains(e.answer, "HTTP 413") || !strings.Contains(e.answer, "gateway.body_timeout") {
					t.Errorf("answer: %s", e.answer)
				}
			case <-time.After(15 * time.Second):
				t.Errorf("slow body, %s: the connection is still held after 15s (%d bytes sent); body_timeout is %s", c.name, sent.Load(), bodyTimeout)
			}
		})
	}
}

// TestGatewayOnlyJSON: a POST a web page can send without a CORS preflight
// (text/plain, form encodings) gets 415 and starts nothing downstream; a
// JSON one starts the server.
func TestGatewayOnlyJSON(t *testing.T) {
	t.Parallel()
	pids := newPidDir(t)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: stdiosrv
    command: [%s, -stdio, -pids, %s]
    permission: open
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [server:stdiosrv]
`, hostileBinary(t), pids))
	d := startDaemon(t, hardenEnv, "-w", ws)
	u := d.base + "/mcp/stdiosrv"
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/json-patch+json", "text/json"} {
		r := postRaw(t, u, ct, hardenToken, "", hardenInit)
		if r.status != http.StatusUnsupportedMediaType || !strings.Contains(r.body, "Content-Type: application/json") || r.sid != "" {
			t.Errorf("Content-Type %q: HTTP %d %s", ct, r.status, r.body)
		}
	}
	// Without a token too (a web page has none): still 415, nothing runs.
	if r := postRaw(t, u, "text/plain", "", "", hardenInit); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain without a token: HTTP %d", r.status)
	}
	n := len(pids.started())
	t.Logf("only JSON: 8 non-JSON POSTs answered 415; server processes started %d", n)
	if n != 0 {
		t.Errorf("%d server processes started for non-JSON bodies", n)
	}
	if r := postRaw(t, u, "application/json; charset=utf-8", hardenToken, "", hardenInit); r.status != http.StatusOK {
		t.Fatalf("JSON initialize: HTTP %d %s", r.status, r.body)
	}
	if len(pids.started()) == 0 {
		t.Error("a JSON initialize started no server: the count above proves nothing")
	}
}

// TestGatewayAgentInstanceNeedsToken: a per-agent HTTP instance on
// loopback answers 401 without its token, and with another agent's.
func TestGatewayAgentInstanceNeedsToken(t *testing.T) {
	t.Parallel()
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
command_packs:
  - use: bundled/json-tools
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [pack:json-tools]
  - id: ops
    token: {env: OPS_TOKEN}
    grants: [pack:json-tools]
`)
	d := startDaemon(t, hardenEnv, "-w", ws, "--agent", "dev")
	u := d.base + "/mcp/json-tools"
	for _, c := range []struct {
		name, token string
		want        int
		body        string
	}{
		{"no token", "", http.StatusUnauthorized, "this instance serves agent dev: send Authorization: Bearer"},
		{"another agent's token", hardenOtherToken, http.StatusUnauthorized, "the token presented is not its token"},
		{"a made-up token", "nobody", http.StatusUnauthorized, "not its token"},
		{"its token", hardenToken, http.StatusOK, `"protocolVersion"`},
	} {
		r := postRaw(t, u, "application/json", c.token, "", hardenInit)
		if r.status != c.want || !strings.Contains(r.body, c.body) {
			t.Errorf("%s: HTTP %d %s", c.name, r.status, r.body)
		}
		if c.want == http.StatusUnauthorized && r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", c.name)
		}
	}
	// A 2026-07-28 request (no session) is held to the same rule.
	r := postRaw(t, u, "application/json", "", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`)
	if r.status != http.StatusUnauthorized {
		t.Errorf("2026-07-28 without a token: HTTP %d %s", r.status, r.body)
	}
}

// TestGatewayApprovalCap: an agent holding max_pending approval requests
// gets the next one refused, clearly, and audited; the same call again
// is not a new request; another agent is not affected; deciding one frees
// a place.
func TestGatewayApprovalCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  approvals: {wait: 100ms, ttl: 10m, max_pending: 3}
command_packs:
  - id: notes
    permission: cautious
    commands:
      - id: write
        description: A write that needs approval.
        argv: [%s, "{n}"]
        inputs: {type: object, properties: {n: {type: string, maxLength: 64}}, required: [n], additionalProperties: false}
        effects: write
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [tool:notes:write]
  - id: ops
    token: {env: OPS_TOKEN}
    grants: [tool:notes:write]
`, argvEcho))
	d := startDaemon(t, hardenEnv, "-w", ws)
	dev := rawConnect(t, d.base+"/mcp/notes", hardenToken)
	ops := rawConnect(t, d.base+"/mcp/notes", hardenOtherToken)
	write := func(s *rawSession, n string) string {
		t.Helper()
		text, isErr := s.callText("write", map[string]any{"n": n})
		if !isErr {
			t.Fatalf("write %s ran without approval: %s", n, text)
		}
		return text
	}
	var ids []string
	for i := range 3 {
		text := write(dev, fmt.Sprint("note-", i))
		id, ok := strings.CutPrefix(text, "DENIED: approval pending ")
		if !ok {
			t.Fatalf("call %d: %s", i, text)
		}
		ids = append(ids, strings.Fields(id)[0])
	}
	if again := write(dev, "note-0"); !strings.Contains(again, "approval pending "+ids[0]) {
		t.Errorf("the same call again: %s", again)
	}
	start := time.Now()
	over := write(dev, "note-3")
	t.Logf("approvals: max_pending 3: the 4th held call answered in %s: %s", time.Since(start).Round(time.Millisecond), over)
	if !strings.HasPrefix(over, "DENIED: ") || !strings.Contains(over, "gateway.approvals.max_pending = 3") || strings.Contains(over, "approval pending") {
		t.Errorf("4th pending request: %s", over)
	}
	if text := write(ops, "ops-0"); !strings.HasPrefix(text, "DENIED: approval pending ") {
		t.Errorf("another agent: %s", text)
	}
	// The refusal is audited as a decision of dev's call.
	var refusal *auditEvent
	for _, ev := range readAudit(t, filepath.Join(dir, "audit.jsonl")) {
		if ev.Agent == "dev" && ev.isCallDecision() && strings.Contains(ev.Reason, "max_pending") {
			refusal = &ev
		}
	}
	if refusal == nil || refusal.Decision != "deny" || refusal.Action != "command:call:notes:write" {
		t.Errorf("no deny decision naming max_pending in the audit: %+v", refusal)
	}
	// Deciding one frees a place.
	if r := toolgate(t, dir, hardenEnv, "approvals", "-w", ws, "deny", ids[1]); r.code != 0 {
		t.Fatalf("approvals deny: %d %s", r.code, r.stderr)
	}
	if text := write(dev, "note-4"); !strings.HasPrefix(text, "DENIED: approval pending ") {
		t.Errorf("after one was decided: %s", text)
	}
}

// TestGatewayKilledLeavesNoServer: a gateway killed outright (SIGKILL, the
// OOM killer) cannot stop its stdio servers itself, and a server that
// stopped reading its stdin never sees the EOF: the supervisor each stdio
// server runs under sees its control pipe end and stops the tree.
func TestGatewayKilledLeavesNoServer(t *testing.T) {
	t.Parallel()
	pids := newPidDir(t)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: frozen
    command: [%s, -stdio, -ignore-term, -pids, %s]
    permission: open
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [server:frozen]
`, hostileBinary(t), pids))
	d := startDaemon(t, hardenEnv, "-w", ws)
	s := rawConnect(t, d.base+"/mcp/frozen", hardenToken)
	if text, isErr := s.callText("freeze", nil); isErr || text != "frozen" {
		t.Fatalf("freeze: %q", text)
	}
	start := time.Now()
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = d.cmd.Process.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(pids.alive()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	left := pids.alive()
	t.Logf("gateway SIGKILLed with a frozen server: server processes left %d after %s", len(left), time.Since(start).Round(time.Millisecond))
	if len(left) != 0 {
		t.Errorf("server processes %v outlived the killed gateway", left)
	}
}
