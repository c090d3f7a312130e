package mcpproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestProbe: the era of a server is what server/discover says; an error
// that is not a modern one, or silence, is a legacy server; a pinned
// protocol_version decides without asking.
func TestProbe(t *testing.T) {
	t.Parallel()
	info := ClientInfo{Name: "toolgate", Version: "1"}
	_, goURL := servertest.GoServer(t)
	unsupported := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"Unsupported","data":{"supported":["2026-07-28"]}}}`))
	})
	legacyHTTP := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
		http.Error(w, "Mcp-Session-Id header required", http.StatusBadRequest)
	})
	oldDiscover := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2025-11-25"]}`)}).Encode())
	})
	cases := []struct {
		name     string
		cfg      *transport.Config
		era      mcpwire.Era
		discover bool
	}{
		{"pinned modern", &transport.Config{ID: "p", URL: "http://127.0.0.1:1", ProtocolVersion: "2026-07-28"}, mcpwire.EraModern, false},
		{"pinned legacy", &transport.Config{ID: "p", URL: "http://127.0.0.1:1", ProtocolVersion: "2025-06-18"}, mcpwire.EraLegacy, false},
		{"mcp-go, both eras", &transport.Config{ID: "go", URL: goURL, Timeout: 5 * time.Second}, mcpwire.EraDual, true},
		{"unsupported version error", &transport.Config{ID: "u", URL: unsupported, Timeout: 5 * time.Second}, mcpwire.EraModern, false},
		{"legacy HTTP", &transport.Config{ID: "l", URL: legacyHTTP, Timeout: 5 * time.Second}, mcpwire.EraLegacy, false},
		{"discover without 2026", &transport.Config{ID: "o", URL: oldDiscover, Timeout: 5 * time.Second}, mcpwire.EraLegacy, false},
		{"legacy stdio", tinyConfig("tiny"), mcpwire.EraLegacy, false},
		{"modern stdio", tinyConfig("tiny", "TG_TINY_MODERN=1"), mcpwire.EraModern, true},
		{"silent stdio", &transport.Config{ID: "s", Command: []string{"sleep", "60"}, Timeout: 100 * time.Millisecond}, mcpwire.EraLegacy, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			era, discover, err := Probe(context.Background(), c.cfg, info)
			if err != nil || era != c.era || (discover != nil) != c.discover {
				t.Errorf("Probe = %v %s %v, want %v (discover %v)", era, discover, err, c.era, c.discover)
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
