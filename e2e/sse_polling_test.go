package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The two 2025-11-25 SSE scenarios of conformance 0.2.0-alpha.12, run
// directly against the conformance server and through the built binary
// fronting it over streamable HTTP, compared check id by check id: SSE
// polling (a priming event with an id and a retry field opens the POST
// stream, the server closes it mid-call, the result comes on a GET with
// Last-Event-ID) and several concurrent POST streams (answered as the
// server answers them, JSON or SSE).
var ssePollingChecks = []string{
	"server-sse-polling/server-sse-priming-event",
	"server-sse-polling/server-sse-retry-field",
	"server-sse-polling/server-sse-disconnect-resume",
}

func TestSSEPollingThroughProxy(t *testing.T) {
	t.Parallel()
	suite := conformanceSuiteIn(t, "conformance-next", "0.2.0-alpha.12")
	direct := startConfHTTP(t)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  # The suite ends none of the sessions it opens.
  sessions: {max_per_agent: 100}
mcp_servers:
  - id: confboth
    url: `+startConfHTTP(t)+`
    permission: open
  - id: conf2025
    url: `+startConfHTTP(t, "-era", "2025")+`
    permission: open
agents:
  - id: tester
    token: {env: TESTER_TOKEN}
    grants: [server:confboth, server:conf2025]
`)
	d := startDaemon(t, []string{"TESTER_TOKEN=" + testerToken}, "-w", ws, "--agent", "tester")
	base := withBearer(t, d.base, testerToken)
	for _, scenario := range []string{"server-sse-polling", "server-sse-multiple-streams"} {
		args := []string{"--scenario", scenario, "--spec-version", "2025-11-25"}
		want, err := suite.run(direct, t.TempDir(), args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, surface := range []string{"confboth", "conf2025"} {
			got, err := suite.run(base+"/mcp/"+surface, t.TempDir(), args...)
			if err != nil {
				t.Fatal(err)
			}
			for k, outcome := range want.Checks {
				if got.Checks[k] != outcome {
					t.Errorf("%s via %s: check %s is %q directly and %q through toolgate (%s)", scenario, surface, k, outcome, orDefault(got.Checks[k], "absent"), got.Why[k])
				}
			}
			if scenario == "server-sse-polling" {
				for _, k := range ssePollingChecks {
					if got.Checks[k] != checkPass {
						t.Errorf("via %s: %s is %q, want it to pass", surface, k, orDefault(got.Checks[k], "absent"))
					}
				}
			}
		}
	}
}

// TestSSEPollingMCPGoClient: a real 2025-11-25 client (mcp-go's) calls
// test_reconnection through toolgate: toolgate polls the server, closes
// the client's stream as the server closed its own, and the client,
// resuming with Last-Event-ID, gets the result; other calls in the same
// session go on meanwhile.
func TestSSEPollingMCPGoClient(t *testing.T) {
	t.Parallel()
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: conf
    url: `+startConfHTTP(t)+`
    permission: open
agents:
  - id: tester
    token: {env: TESTER_TOKEN}
    grants: [server:conf]
`)
	d := startDaemon(t, []string{"TESTER_TOKEN=" + testerToken}, "-w", ws, "--agent", "tester")
	cl, err := client.NewStreamableHttpClient(d.base+"/mcp/conf", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + testerToken}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-11-25"
	req.Params.ClientInfo = mcp.Implementation{Name: "toolgate-e2e", Version: "1"}
	if res, err := cl.Initialize(ctx, req); err != nil || res.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize: %v %v", res, err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, isErr, _, err := call(t, cl, "test_reconnection", nil)
			if err != nil || isErr || !strings.Contains(text, "Reconnection test completed successfully") {
				t.Errorf("test_reconnection: %q %v %v", text, isErr, err)
			}
		}()
	}
	if text, isErr, _, err := call(t, cl, "echo", map[string]any{"text": "meanwhile"}); err != nil || isErr || text != "meanwhile" {
		t.Errorf("echo: %q %v %v", text, isErr, err)
	}
	wg.Wait()
}
