package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestProxyBenchmark measures tools/call on the trivial echo tool directly
// and through toolgate, HTTP→HTTP and HTTP→stdio, at concurrency 1 and 16
// (one client session per worker): p50/p99 latency, the latency toolgate
// adds, and calls/s. It is a measurement, not a check: run it with
//
//	TOOLGATE_PROXY_BENCH=1 go test ./e2e -run TestProxyBenchmark -v
func TestProxyBenchmark(t *testing.T) {
	if os.Getenv("TOOLGATE_PROXY_BENCH") == "" {
		t.Skip("set TOOLGATE_PROXY_BENCH=1 to measure the proxy")
	}
	calls := 3000
	httpURL := startConfHTTP(t)
	bin := conformanceServer(t)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: confhttp
    url: `+httpURL+`
    effects: {echo: read}
  - id: confstdio
    command: [`+bin+`, -stdio]
    effects: {echo: read}
agents:
  - id: bench
    token: {env: BENCH_TOKEN}
    grants: [tool:confhttp:echo, tool:confstdio:echo]
`)
	d := startDaemon(t, []string{"BENCH_TOKEN=" + testerToken}, "-w", ws, "--agent", "bench")
	open := map[string]func(t testing.TB) *client.Client{
		"direct HTTP":         func(t testing.TB) *client.Client { return mcpHTTP(t, httpURL, "") },
		"toolgate HTTP→HTTP":  func(t testing.TB) *client.Client { return mcpHTTP(t, d.base+"/mcp/confhttp", testerToken) },
		"direct stdio":        func(t testing.TB) *client.Client { return mcpStdioCmd(t, bin, "-stdio") },
		"toolgate HTTP→stdio": func(t testing.TB) *client.Client { return mcpHTTP(t, d.base+"/mcp/confstdio", testerToken) },
	}
	pairs := [][2]string{{"direct HTTP", "toolgate HTTP→HTTP"}, {"direct stdio", "toolgate HTTP→stdio"}}
	for _, conc := range []int{1, 16} {
		for _, p := range pairs {
			direct := measure(t, open[p[0]], conc, calls)
			proxied := measure(t, open[p[1]], conc, calls)
			t.Logf("c=%-2d %-20s p50 %6.0fµs p99 %6.0fµs %8.0f calls/s", conc, p[0], direct.p50, direct.p99, direct.rate)
			t.Logf("c=%-2d %-20s p50 %6.0fµs p99 %6.0fµs %8.0f calls/s | added p50 %+.0fµs p99 %+.0fµs, throughput %.0f%% of direct",
				conc, p[1], proxied.p50, proxied.p99, proxied.rate, proxied.p50-direct.p50, proxied.p99-direct.p99, 100*proxied.rate/direct.rate)
		}
	}
}

type benchResult struct{ p50, p99, rate float64 }

func mcpStdioCmd(t testing.TB, bin string, args ...string) *client.Client {
	t.Helper()
	cl, err := client.NewStdioMCPClient(bin, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	initClient(t, cl)
	return cl
}

// measure runs calls echo calls spread over conc workers, each with its
// own session, after a short warm-up.
func measure(t *testing.T, open func(testing.TB) *client.Client, conc, calls int) benchResult {
	t.Helper()
	clients := make([]*client.Client, conc)
	for i := range clients {
		clients[i] = open(t)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": "hello"}
	one := func(cl *client.Client) time.Duration {
		start := time.Now()
		res, err := cl.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("echo: %v %v", err, res)
		}
		return time.Since(start)
	}
	for _, cl := range clients {
		for range 50 {
			one(cl)
		}
	}
	per := calls / conc
	lat := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				lat[w] = append(lat[w], one(clients[w]))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	us := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))].Nanoseconds()) / 1e3 }
	for _, cl := range clients {
		cl.Close()
	}
	return benchResult{p50: us(0.50), p99: us(0.99), rate: float64(len(all)) / elapsed.Seconds()}
}

var _ = fmt.Sprint
