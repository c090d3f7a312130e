package servertest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/jsonrpc"
)

// GoServer is an mcp-go MCP server (a real peer) with the tools the HTTP
// tests use — echo, progress, confirm (one input-required round), nag
// (input required for ever) — served over streamable HTTP until the test
// ends.
func GoServer(t *testing.T, opts ...server.StreamableHTTPOption) (*server.MCPServer, string) {
	t.Helper()
	s := server.NewMCPServer("go-peer", "1.0.0", server.WithToolCapabilities(true), server.WithLogging())
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})
	s.AddTool(mcp.NewTool("progress"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.Meta; tok != nil && tok.ProgressToken != nil {
			_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": tok.ProgressToken, "progress": 1, "total": 2})
		}
		return mcp.NewToolResultText("progressed"), nil
	})
	s.AddTool(mcp.NewTool("confirm"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r := server.ElicitationResponse(req.Params.InputResponses, "ok"); r != nil {
			b, _ := json.Marshal(r.Content)
			return mcp.NewToolResultText("confirmed " + string(r.Action) + " " + string(b) + " state=" + req.Params.RequestState), nil
		}
		return server.NewInputRequestBuilder("st-1").Elicit("ok", mcp.ElicitationParams{Message: "sure?", RequestedSchema: map[string]any{"type": "object"}}).ToolResult(), nil
	})
	s.AddTool(mcp.NewTool("nag"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return server.NewInputRequestBuilder("again").Elicit("more", mcp.ElicitationParams{Message: "more?", RequestedSchema: map[string]any{"type": "object"}}).ToolResult(), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s, opts...))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// ScriptedHTTP is a downstream whose answers a test writes by hand, for
// what no well-behaved server does: initialize opens session sess-1,
// notifications are accepted, every other POST is h's; GET and DELETE are
// refused (405).
func ScriptedHTTP(t *testing.T, h func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)) string {
	t.Helper()
	return ScriptedHTTPAll(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		h(w, r, m)
	})
}

// ScriptedHTTPAll is ScriptedHTTP whose handler also gets GET and DELETE
// (m nil).
func ScriptedHTTPAll(t *testing.T, h func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m *jsonrpc.Message
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			m, _ = jsonrpc.ParseMessage(b)
		}
		if m != nil && m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "sess-1")
			w.Header().Set("Content-Type", "application/json")
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)}).Encode())
			return
		}
		if m != nil && m.Kind() != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		h(w, r, m)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// StreamedAnswer is a session server that answers every call on an SSE
// stream carrying, in order: a comment and a priming event, progress for
// token "x", a roots/list request of its own (id "srv-1"), the answer
// ({"done":1}), and — after a flush — a notification written just after
// the answer ({"data":"after"}).
func StreamedAnswer(t *testing.T) string {
	t.Helper()
	return ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(": comment\n\nid: 1\ndata: \n\n"))
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"x\",\"progress\":1}}\n\n"))
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\n"))
		w.Write([]byte("data: " + string((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"done":1}`)}).Encode()) + "\n\n"))
		w.(http.Flusher).Flush()
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"after\"}}\n\n"))
	})
}

// WaitFor polls cond until it holds, failing the test when it does not
// within ten seconds.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
