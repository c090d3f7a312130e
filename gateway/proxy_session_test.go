package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// childPIDs lists this process's live children but the containment
// watcher (Linux /proc).
func childPIDs(t *testing.T) []string {
	t.Helper()
	var out []string
	entries, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid int
		if _, err := fmt.Sscanf(s[i+1:], " %s %d", &state, &ppid); err == nil && ppid == self && state != "Z" && !isWatcher(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// isWatcher reports whether pid is the containment watcher, the one child
// a gateway keeps for its whole life (packs/contain): not a server.
func isWatcher(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	arg0, _, _ := strings.Cut(string(b), "\x00")
	return err == nil && arg0 == supervisor.WatchArg0
}

// TestProxyNoLeaks opens and closes 200 client sessions to a stdio server
// through the proxy: afterwards no server process and no goroutine of
// theirs remains.
func TestProxyNoLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 200 server processes")
	}
	bin := buildConformanceServer(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: conf
    command: [`+bin+`, -stdio]
    permission: open
agents:
  - id: tester
    token: {env: TESTER_TOKEN}
    grants: [server:conf]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "TESTER_TOKEN" {
			return testerToken
		}
		return os.Getenv(k)
	}
	g, err := Open(context.Background(), ws, Options{Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	srv := httptest.NewServer(g.Handler(HTTPOptions{Agent: "tester"}))
	defer srv.Close()
	tr := &http.Transport{}
	cl := &http.Client{Transport: tr}
	url := srv.URL + "/mcp/conf"

	session := func(i int) {
		sid, _ := mcpPost(t, cl, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"leak","version":"1"}}}`)
		mcpPost(t, cl, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		_, out := mcpPost(t, cl, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s%d"}}}`, i))
		if !strings.Contains(out, fmt.Sprintf(`"text":"s%d"`, i)) {
			t.Fatalf("session %d: echo answered %s", i, out)
		}
		req, _ := http.NewRequest("DELETE", url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Authorization", "Bearer "+testerToken)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	settled := func(base int) func() bool {
		return func() bool {
			tr.CloseIdleConnections()
			return len(childPIDs(t)) == 0 && runtime.NumGoroutine() <= base
		}
	}
	// The first session lists the server's tools and warms the pools.
	session(-1)
	waitForCond(t, 10*time.Second, "no server process after the warm-up", settled(1<<30))
	base := runtime.NumGoroutine()
	for i := range 200 {
		session(i)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !settled(base)() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("after 200 sessions: %d server processes left, %d goroutines (baseline %d)\n%s",
				len(childPIDs(t)), runtime.NumGoroutine(), base, bytes.TrimSpace(buf[:n]))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProxySession: a client session relayed to the server — its
// tools/list is the agent's own, its calls pass the one entry (decided and
// audited under mcp:call) and what the agent may not call never reaches
// the server.
func TestProxySession(t *testing.T) {
	t.Parallel()
	g := openProxyGateway(t)
	narrow := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/conf", "narrow-token-0123456789"}
	sid := narrow.session()
	list := responseTo(t, narrow.post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil).Body.Bytes(), "2")
	var tools struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(list, &tools); err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("narrow's tools/list: %s", list)
	}
	res := responseTo(t, narrow.post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"}}}`, nil).Body.Bytes(), "3")
	if !strings.Contains(string(res), `"text":"ok"`) {
		t.Errorf("echo: %s", res)
	}
	res = responseTo(t, narrow.post(sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"calls","arguments":{}}}`, nil).Body.Bytes(), "4")
	if !strings.Contains(string(res), "DENIED") {
		t.Errorf("a tool narrow may not call: %s", res)
	}
	// Each executed call has its outcome event after its decision; the
	// refused one has none: it never reached the server.
	var got []string
	for _, ev := range events(t, g) {
		if ev.Agent == "narrow" {
			got = append(got, ev.Action+" "+ev.Decision)
		}
	}
	if strings.Join(got, ",") != "mcp:call:conf:echo allow,mcp:call:conf:echo completed,mcp:call:conf:calls deny" {
		t.Errorf("audited %v", got)
	}
}
