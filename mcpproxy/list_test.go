package mcpproxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// TestListTools pages through tools/list on a session of the proxy's own
// and keeps each tool as the server wrote it.
func TestListTools(t *testing.T) {
	t.Parallel()
	info := ClientInfo{Name: "toolgate", Version: "1"}
	tools, err := ListTools(context.Background(), tinyConfig("tiny", "TG_TINY_TOOLS=4"), info)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 7 || !strings.Contains(string(tools[0]), `"$defs":{}`) || !strings.Contains(string(tools[6]), "extra03") {
		t.Errorf("tools %s", tools)
	}
	_, url := servertest.GoServer(t)
	tools, err = ListTools(context.Background(), (&transport.Config{ID: "go", URL: url, Timeout: 5 * time.Second}).Stateless(), info)
	if err != nil || len(tools) != 4 {
		t.Errorf("stateless: %d tools, %v", len(tools), err)
	}
}

func TestListToolsFailures(t *testing.T) {
	t.Parallel()
	info := ClientInfo{Name: "toolgate", Version: "1"}
	cases := []struct {
		name string
		h    func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)
		want string
	}{
		{"list error", func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(jsonrpc.ErrorResponse(m.ID, -32601, "no tools here"))
		}, "tools/list: no tools here"},
		{"not a list", func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"tools":"many"}`)}).Encode())
		}, "tools/list: json"},
		{"endless", func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"tools":[],"nextCursor":"again"}`)}).Encode())
		}, "did not end after 1000 pages"},
	}
	for _, c := range cases {
		_, err := ListTools(context.Background(), &transport.Config{ID: "s", URL: servertest.ScriptedHTTP(t, c.h), Timeout: 5 * time.Second}, info)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	bare := scriptedBare(t, func(w http.ResponseWriter, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(jsonrpc.ErrorResponse(m.ID, -32602, "bad version"))
	})
	if _, err := ListTools(context.Background(), &transport.Config{ID: "b", URL: bare, Timeout: 5 * time.Second}, info); err == nil || !strings.Contains(err.Error(), "initialize: bad version") {
		t.Errorf("failed initialize: %v", err)
	}
	if _, err := ListTools(context.Background(), &transport.Config{ID: "none"}, info); err == nil {
		t.Error("no server")
	}
}

// scriptedBare is a downstream that answers every POST with h, initialize
// included.
func scriptedBare(t *testing.T, h func(w http.ResponseWriter, m *jsonrpc.Message)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.ParseMessage(b)
		if err != nil || m.Kind() != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		h(w, m)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
