package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// idleResult is toolgate's memory before and after opening idle sessions.
type idleResult struct {
	surface           string
	sessions          int
	beforeKB, afterKB int64
	// runtime is the Go runtime's gauges with the sessions open
	// (-idle-detail), or "".
	runtime string
}

// idleSessions opens n session-era MCP sessions (initialize, then
// notifications/initialized; no GET stream, no call) at url, served by g, and
// leaves them open, then reads toolgate's RSS. The sessions are kept until
// toolgate stops.
//
// A stateless server (TBXark/mcp-proxy's: stateless is true) issues no
// session id; it keeps nothing per client, and the figure says so.
func idleSessions(g *gate, url string, n int, stateless bool) idleResult {
	hc := &http.Client{Timeout: callTimeout}
	surface := url
	post := func(sid, body string) (string, error) {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("Authorization", "Bearer "+benchToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", eraSession)
		}
		res, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode/100 != 2 {
			return "", fmt.Errorf("%s: %s", res.Status, bytes.TrimSpace(b))
		}
		return res.Header.Get("Mcp-Session-Id"), nil
	}
	open := func(i int) {
		sid, err := post("", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"bench-idle","version":"1"}}}`, i, eraSession))
		if err != nil || (sid == "" && !stateless) {
			fatalf("idle session %d on %s: %v (no session id: %v)", i, surface, err, sid == "")
		}
		if _, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			fatalf("idle session %d on %s: initialized: %v", i, surface, err)
		}
	}
	open(0) // the surface's first session starts what every later one shares
	settle()
	before := rssKB(g.pid)
	for i := 1; i <= n; i++ {
		open(i)
	}
	settle()
	return idleResult{surface: surface, sessions: n, beforeKB: before, afterKB: rssKB(g.pid), runtime: goRuntime(g)}
}

// goRuntime reads the Go runtime's gauges from g's open /metrics
// (-idle-detail): goroutines, heap in use and stacks in use; "" when
// there are none.
func goRuntime(g *gate) string {
	res, err := http.Get(g.base + "/metrics")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var out []string
	for _, l := range strings.Split(string(body), "\n") {
		for _, m := range []string{"go_goroutines ", "go_memstats_heap_inuse_bytes ", "go_memstats_stack_inuse_bytes "} {
			if v, ok := strings.CutPrefix(l, m); ok {
				f, _ := strconv.ParseFloat(v, 64)
				if m == "go_goroutines " {
					out = append(out, fmt.Sprintf("%.0f goroutines", f))
				} else {
					out = append(out, fmt.Sprintf("%s %.1f MB", strings.TrimSuffix(strings.TrimPrefix(m, "go_memstats_"), "_bytes "), f/(1<<20)))
				}
			}
		}
	}
	return strings.Join(out, ", ")
}

// settle gives the gateway's background work (a downstream probe, the
// runtime's scavenger) a moment before memory is read.
func settle() { time.Sleep(500 * time.Millisecond) }
