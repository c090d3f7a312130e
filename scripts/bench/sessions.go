package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"
)

// idleResult is toolgate's memory before and after opening idle sessions.
type idleResult struct {
	surface           string
	sessions          int
	beforeKB, afterKB int64
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
	return idleResult{surface: surface, sessions: n, beforeKB: before, afterKB: rssKB(g.pid)}
}

// settle gives the gateway's background work (a downstream probe, the
// runtime's scavenger) a moment before memory is read.
func settle() { time.Sleep(500 * time.Millisecond) }
