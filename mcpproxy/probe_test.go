package mcpproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
)

// TestProbe: the era of a server is what server/discover says; an error
// that is not a modern one, or silence, is a legacy server; a pinned
// protocol_version decides without asking.
func TestProbe(t *testing.T) {
	t.Parallel()
	info := ClientInfo{Name: "toolgate", Version: "1"}
	_, goURL := goServer(t)
	unsupported := scriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32022,"message":"Unsupported","data":{"supported":["2026-07-28"]}}}`))
	})
	legacyHTTP := scriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
		http.Error(w, "Mcp-Session-Id header required", http.StatusBadRequest)
	})
	oldDiscover := scriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2025-11-25"]}`)}).Encode())
	})
	cases := []struct {
		name     string
		cfg      *Config
		era      Era
		discover bool
	}{
		{"pinned modern", &Config{ID: "p", URL: "http://127.0.0.1:1", ProtocolVersion: "2026-07-28"}, Modern, false},
		{"pinned legacy", &Config{ID: "p", URL: "http://127.0.0.1:1", ProtocolVersion: "2025-06-18"}, Legacy, false},
		{"mcp-go, both eras", &Config{ID: "go", URL: goURL, Timeout: 5 * time.Second}, DualEra, true},
		{"unsupported version error", &Config{ID: "u", URL: unsupported, Timeout: 5 * time.Second}, Modern, false},
		{"legacy HTTP", &Config{ID: "l", URL: legacyHTTP, Timeout: 5 * time.Second}, Legacy, false},
		{"discover without 2026", &Config{ID: "o", URL: oldDiscover, Timeout: 5 * time.Second}, Legacy, false},
		{"legacy stdio", tinyConfig("tiny"), Legacy, false},
		{"modern stdio", tinyConfig("tiny", "TG_TINY_MODERN=1"), Modern, true},
		{"silent stdio", &Config{ID: "s", Command: []string{"sleep", "60"}, Timeout: 100 * time.Millisecond}, Legacy, false},
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
	if _, _, err := Probe(context.Background(), &Config{ID: "none"}, info); err == nil {
		t.Error("probe of nothing")
	}
	for era, want := range map[Era]string{Legacy: "2025-11-25 or earlier", Modern: "2026-07-28 only", DualEra: "2026-07-28 and earlier"} {
		if era.String() != want || era.Stateless() != (era != Legacy) {
			t.Errorf("%d: %q", era, era.String())
		}
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
