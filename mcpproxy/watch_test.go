package mcpproxy

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// TestWatcherHearsToolChanges: a server's tools/list_changed reaches the
// watcher's hook, which can list on the session it is given, while no
// client session listens; Close ends the session, and a stdio server is
// not watched.
func TestWatcherHearsToolChanges(t *testing.T) {
	t.Parallel()
	srv, url := servertest.GoServer(t)
	var w Watcher
	t.Cleanup(w.Close)
	listed := make(chan int, 16)
	// closing is set before Close: a change the server announced for a
	// tool added after the one awaited may reach the hook while the
	// session closes, and its listing then fails, as it should.
	var closing atomic.Bool
	changed := func(ctx context.Context, s *Session) {
		tools, err := s.ListTools(ctx)
		if err != nil {
			if !closing.Load() {
				t.Errorf("listing on the watcher's session: %v", err)
			}
			return
		}
		select {
		case listed <- len(tools):
		default:
		}
	}
	cfg := &transport.Config{ID: "go", URL: url, Timeout: 10 * time.Second}
	w.Start(cfg, ClientInfo{Name: "toolgate", Version: "test"}, changed)
	w.Start(cfg, ClientInfo{Name: "toolgate", Version: "test"}, changed) // once
	var added atomic.Int32
	var got int
	servertest.WaitFor(t, "the watcher's hook after a tool change", func() bool {
		n := added.Add(1)
		srv.AddTool(mcp.NewTool(fmt.Sprintf("added%d", n)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
		select {
		case got = <-listed:
			return true
		default:
			return false
		}
	})
	if got <= 4 {
		t.Errorf("the hook listed %d tools, want the added ones too", got)
	}
	closing.Store(true)
	w.Close()
	w.mu.Lock()
	if w.s != nil {
		t.Error("Close left the watching session open")
	}
	w.mu.Unlock()

	var stdio Watcher
	stdio.Start(tinyConfig("tiny"), ClientInfo{Name: "toolgate"}, changed)
	stdio.mu.Lock()
	if stdio.started {
		t.Error("a stdio server is watched")
	}
	stdio.mu.Unlock()
}
