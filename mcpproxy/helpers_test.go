package mcpproxy

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/jsonrpc"
)

// tinyConfig describes the tiny stdio server (this test binary re-run);
// env adds its switches.
func tinyConfig(id string, env ...string) *Config {
	return &Config{ID: id, Command: []string{os.Args[0]}, Env: append([]string{"TG_TINY_MCP=1", "GOCOVERDIR=" + os.Getenv("GOCOVERDIR")}, env...), Timeout: 10 * time.Second}
}

// sent is one message a session gave its client.
type sent struct {
	msg       string
	route     string
	droppable bool
}

// recorder is the client side of a session under test.
type recorder struct {
	mu   sync.Mutex
	msgs []sent
	cond chan struct{}
	// onRequest answers the server's requests the relay passes on.
	onRequest func(m *jsonrpc.Message)
}

func newRecorder() *recorder { return &recorder{cond: make(chan struct{}, 1)} }

func (r *recorder) Send(msg []byte, route json.RawMessage, droppable bool) {
	r.mu.Lock()
	r.msgs = append(r.msgs, sent{string(msg), string(route), droppable})
	on := r.onRequest
	r.mu.Unlock()
	select {
	case r.cond <- struct{}{}:
	default:
	}
	if on != nil {
		if m, err := jsonrpc.ParseMessage(msg); err == nil && m.Kind() == jsonrpc.KindRequest {
			go on(m)
		}
	}
}

// wait returns the first message sent that contains substr.
func (r *recorder) wait(t *testing.T, substr string) sent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		for _, s := range r.msgs {
			if strings.Contains(s.msg, substr) {
				r.mu.Unlock()
				return s
			}
		}
		r.mu.Unlock()
		select {
		case <-r.cond:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no message containing %q; got %v", substr, r.all())
		}
	}
}

func (r *recorder) all() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.msgs...)
}

func (r *recorder) has(substr string) bool {
	for _, s := range r.all() {
		if strings.Contains(s.msg, substr) {
			return true
		}
	}
	return false
}

func msg(t *testing.T, s string) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.ParseMessage([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const initMsg = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`

// startSession opens a relay to cfg for rec and plays the client's
// handshake.
func startSession(t *testing.T, cfg *Config, rec *recorder, hooks Hooks) *Session {
	t.Helper()
	s, err := NewSession(context.Background(), cfg, rec, hooks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.HandleClient(context.Background(), msg(t, initMsg))
	rec.wait(t, `"protocolVersion"`)
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

// callText is a tools/call message.
func callText(id, tool, args string) string {
	if args == "" {
		args = "{}"
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// goServer is an mcp-go MCP server (a real peer) with the tools the HTTP
// tests use, served over streamable HTTP.
func goServer(t *testing.T, opts ...server.StreamableHTTPOption) (*server.MCPServer, string) {
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
