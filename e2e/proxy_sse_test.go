package e2e

import (
	"slices"
	"strings"
	"testing"
)

// TestProxyLegacySSEDownstream: a server reached over the legacy HTTP+SSE
// transport (`transport: sse`) is served and governed like the others.
func TestProxyLegacySSEDownstream(t *testing.T) {
	t.Parallel()
	httpURL := startConfHTTP(t)
	sseURL := strings.TrimSuffix(httpURL, "/mcp") + "/sse"
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: confsse
    url: `+sseURL+`
    transport: sse
    effects: {echo: read, calls: read}
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants:
      - op: tool:confsse:echo
        param_constraints: {text: {enum: [hello]}}
      - tool:confsse:calls
`)
	d := startDaemon(t, []string{"READER_TOKEN=rt-0123456789abcdef"}, "-w", ws)
	s := rawConnect(t, d.base+"/mcp/confsse", "rt-0123456789abcdef")
	defer s.close()
	names, _ := s.rawTools()
	slices.Sort(names)
	if !slices.Equal(names, []string{"calls", "echo"}) {
		t.Fatalf("tools over SSE = %v, want [calls echo]", names)
	}
	if text, isErr := s.callText("echo", map[string]any{"text": "hello"}); isErr || text != "hello" {
		t.Errorf("echo over SSE = %q (isError %v)", text, isErr)
	}
	if text, isErr := s.callText("echo", map[string]any{"text": "bye"}); !isErr || !strings.HasPrefix(text, "DENIED: ") {
		t.Errorf("constrained echo over SSE = %q, want DENIED", text)
	}
}
