package e2e

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestProxyDownstreamFailures: a hanging server is bounded by its timeout;
// a crashing or flooding one fails the call in flight with a clear error,
// comes back (clients are told tools/list_changed), and other surfaces
// are unaffected throughout.
// testerToken is the token of agent "tester" in the proxy tests.
const testerToken = "tester-secret-token"

func TestProxyDownstreamFailures(t *testing.T) {
	httpURL := startConfHTTP(t)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: fragile
    command: [`+conformanceServer(t)+`, -stdio]
    permission: open
    timeout: 1s
    max_output: 64KiB
  - id: steady
    url: `+httpURL+`
    permission: open
agents:
  - id: tester
    token: {env: TESTER_TOKEN}
    grants: [server:fragile, server:steady]
`)
	d := startDaemon(t, []string{"TESTER_TOKEN=" + testerToken}, "-w", ws, "--agent", "tester")
	s := rawConnect(t, d.base+"/mcp/fragile", testerToken)
	steady := rawConnect(t, d.base+"/mcp/steady", testerToken)
	defer s.close()
	defer steady.close()

	// The client's standalone stream, where list_changed arrives.
	events := make(chan string, 64)
	req, _ := http.NewRequest("GET", s.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testerToken)
	req.Header.Set("Mcp-Session-Id", s.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	defer resp.Body.Close()
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
		close(events)
	}()
	expectListChanged := func(what string) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case line, ok := <-events:
				if !ok {
					t.Fatalf("%s: GET stream ended", what)
				}
				if strings.Contains(line, "notifications/tools/list_changed") {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no tools/list_changed on the client's stream", what)
			}
		}
	}
	steadyWorks := func(what string) {
		t.Helper()
		if text, isErr := steady.callText("echo", map[string]any{"text": what}); isErr || text != what {
			t.Errorf("%s: the other surface failed: %q", what, text)
		}
	}
	pidBack := func(what, old string) string {
		t.Helper()
		var pid string
		waitFor(t, 15*time.Second, what+": server back", func() bool {
			text, isErr := s.callText("pid", nil)
			pid = text
			return !isErr && text != old
		})
		return pid
	}

	start := time.Now()
	text, isErr := s.callText("hang", nil)
	if !isErr || !strings.Contains(text, "did not answer tools/call within 1s") {
		t.Errorf("hang: %q (isError %v)", text, isErr)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("hang took %s; the timeout is 1s", took)
	}
	steadyWorks("after-hang")

	pid1, _ := s.callText("pid", nil)
	text, isErr = s.callText("crash", nil)
	if !isErr || !strings.Contains(text, `server "fragile" failed while the request was in flight`) {
		t.Errorf("crash: %q (isError %v)", text, isErr)
	}
	steadyWorks("after-crash")
	pid2 := pidBack("crash", pid1)
	expectListChanged("crash")

	text, isErr = s.callText("flood", map[string]any{"bytes": 1 << 20})
	if !isErr || !strings.Contains(text, "longer than 65536 bytes") {
		t.Errorf("flood: %q (isError %v)", text, isErr)
	}
	steadyWorks("after-flood")
	pidBack("flood", pid2)
	expectListChanged("flood")
}
