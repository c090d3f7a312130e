package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// polling serves SSE polling (SEP-1699, 2025-11-25) for test_reconnection,
// which mcp-go v1.2.1 does not do on the server side: the POST's SSE
// stream opens with a priming event (an event id, empty data, a retry
// field) and is closed before the result is sent; the client reconnects
// with GET and Last-Event-ID and gets the result there. The suite's
// server-sse-polling scenario checks the three steps.
type polling struct {
	mu      sync.Mutex
	pending map[string][]byte // priming event id → the response owed
}

// maxPendingPolls bounds the results held for clients that never come back.
const maxPendingPolls = 64

const reconnectionText = "Reconnection test completed successfully"

func newPolling() *polling { return &polling{pending: map[string][]byte{}} }

// takePost reports whether body is a 2025 session's call of
// test_reconnection that this POST should answer by polling.
func (p *polling) takePost(r *http.Request, body []byte) bool {
	if r.Header.Get(mcp.HeaderSessionID) == "" || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) ||
		!strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		return false
	}
	var req guardedRequest
	return json.Unmarshal(body, &req) == nil && len(req.ID) > 0 &&
		req.Method == string(mcp.MethodToolsCall) && req.Params.Name == "test_reconnection" && !mcp.IsModernProtocol(metaVersion(req))
}

func metaVersion(req guardedRequest) string {
	var v string
	_ = json.Unmarshal(req.Params.Meta[mcp.MetaKeyProtocolVersion], &v)
	return v
}

// servePost writes the priming event and closes the stream, keeping the
// result for the reconnection.
func (p *polling) servePost(w http.ResponseWriter, body []byte) {
	var req guardedRequest
	_ = json.Unmarshal(body, &req)
	result, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID,
		"result": mcp.NewToolResultText(reconnectionText)})
	raw := make([]byte, 8)
	_, _ = rand.Read(raw)
	eventID := "poll-" + hex.EncodeToString(raw)
	p.mu.Lock()
	if len(p.pending) >= maxPendingPolls {
		for k := range p.pending {
			delete(p.pending, k)
			break
		}
	}
	p.pending[eventID] = result
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "id: %s\nretry: 200\ndata: \n\n", eventID)
}

// serveGet answers a reconnection whose Last-Event-ID is a priming event
// of ours, and reports whether it did.
func (p *polling) serveGet(w http.ResponseWriter, r *http.Request) bool {
	last := r.Header.Get(mcp.HeaderLastEventID)
	if last == "" {
		return false
	}
	p.mu.Lock()
	result, ok := p.pending[last]
	delete(p.pending, last)
	p.mu.Unlock()
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "id: %s-1\nevent: message\ndata: %s\n\n", last, result)
	return true
}
