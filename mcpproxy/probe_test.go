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
	"github.com/toolgate/toolgate/mcpwire"
)

// rawHTTP is a downstream that answers every POST (initialize included)
// with h: for servers that refuse the session handshake.
func rawHTTP(t *testing.T, h func(w http.ResponseWriter, m *jsonrpc.Message)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.ParseMessage(b)
		if r.Method != http.MethodPost || err != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		if m.Kind() != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		h(w, m)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// unsupportedVersion answers m as a 2026-07-28-only server answers an
// initialize (or any request of an era it does not speak).
func unsupportedVersion(w http.ResponseWriter, m *jsonrpc.Message) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"Unsupported","data":{"supported":["2026-07-28"]}}}`))
}

// TestProbe: a server's eras are what it does, asked in each, whatever
// server/discover lists — a DiscoverResult naming only 2026-07-28 from a
// server that serves initialize is a server of both eras; one that
// answers neither question is an error; a pinned protocol_version decides
// without asking.
func TestProbe(t *testing.T) {
	t.Parallel()
	info := ClientInfo{Name: "toolgate", Version: "1"}
	_, goURL := servertest.GoServer(t)
	unsupported := rawHTTP(t, unsupportedVersion)
	modernOnly := rawHTTP(t, func(w http.ResponseWriter, m *jsonrpc.Message) {
		if m.Method != "server/discover" {
			unsupportedVersion(w, m)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":{}}`)}).Encode())
	})
	// The conformance suite's reference server: discover lists only
	// 2026-07-28, initialize opens a session all the same.
	listsModernServesBoth := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":{}}`)}).Encode())
	})
	legacyHTTP := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
		http.Error(w, "Mcp-Session-Id header required", http.StatusBadRequest)
	})
	oldDiscover := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2025-11-25"]}`)}).Encode())
	})
	broken := rawHTTP(t, func(w http.ResponseWriter, _ *jsonrpc.Message) { http.Error(w, "down", http.StatusInternalServerError) })
	cases := []struct {
		name     string
		cfg      *transport.Config
		era      mcpwire.Era
		discover bool
		err      string
	}{
		{"pinned modern", &transport.Config{ID: "p", URL: "http://127.0.0.1:1", ProtocolVersion: "2026-07-28"}, mcpwire.EraModern, false, ""},
		{"pinned legacy", &transport.Config{ID: "p", URL: "http://127.0.0.1:1", ProtocolVersion: "2025-06-18"}, mcpwire.EraLegacy, false, ""},
		{"mcp-go, both eras", &transport.Config{ID: "go", URL: goURL, Timeout: 5 * time.Second}, mcpwire.EraDual, true, ""},
		{"unsupported version error", &transport.Config{ID: "u", URL: unsupported, Timeout: 5 * time.Second}, mcpwire.EraModern, false, ""},
		{"modern only", &transport.Config{ID: "m", URL: modernOnly, Timeout: 5 * time.Second}, mcpwire.EraModern, true, ""},
		{"discover lists 2026 only, initialize served", &transport.Config{ID: "r", URL: listsModernServesBoth, Timeout: 5 * time.Second}, mcpwire.EraDual, true, ""},
		{"legacy HTTP", &transport.Config{ID: "l", URL: legacyHTTP, Timeout: 5 * time.Second}, mcpwire.EraLegacy, false, ""},
		{"discover without 2026", &transport.Config{ID: "o", URL: oldDiscover, Timeout: 5 * time.Second}, mcpwire.EraLegacy, false, ""},
		{"legacy stdio", tinyConfig("tiny"), mcpwire.EraLegacy, false, ""},
		{"modern stdio serving initialize", tinyConfig("tiny", "TG_TINY_MODERN=1"), mcpwire.EraDual, true, ""},
		{"modern-only stdio", tinyConfig("tiny", "TG_TINY_MODERN=1", "TG_TINY_NO_INIT=1"), mcpwire.EraModern, true, ""},
		{"silent stdio", &transport.Config{ID: "s", Command: []string{"sleep", "60"}, Timeout: 100 * time.Millisecond}, mcpwire.EraLegacy, false, `server "s" speaks no protocol era`},
		{"HTTP answering neither", &transport.Config{ID: "b", URL: broken, Timeout: 5 * time.Second}, mcpwire.EraLegacy, false, "HTTP 500"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			era, discover, err := Probe(context.Background(), c.cfg, info)
			if (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("Probe error = %v, want one containing %q", err, c.err)
			}
			if era != c.era || (discover != nil) != c.discover {
				t.Errorf("Probe = %v %s, want %v (discover %v)", era, discover, c.era, c.discover)
			}
		})
	}
	if _, _, err := Probe(context.Background(), &transport.Config{ID: "none"}, info); err == nil {
		t.Error("probe of nothing")
	}
}

func TestModernMeta(t *testing.T) {
	t.Parallel()
	got := string(ModernMeta(json.RawMessage(`{"name":"x"}`), ClientInfo{Name: "toolgate", Version: "2"}))
	want := `{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"toolgate","version":"2"}}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(ModernMeta(nil, ClientInfo{})); !strings.HasPrefix(got, `{"_meta":{`) {
		t.Errorf("nil params: %s", got)
	}
}
