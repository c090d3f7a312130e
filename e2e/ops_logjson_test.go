package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/strictjson"
)

// hostileText is what an attacker puts wherever a log line may quote it:
// quotes, backslashes, a terminal escape, a newline, NUL, invalid UTF-8,
// a bidirectional override, a lone surrogate's bytes, HTML.
const hostileText = "q\"b\\s\x1b[31mred\nnew\x00nul\xff\xfe\u202edir\xed\xa0\x80</script>&"

// TestOpsJSONLogValid: with --log-format json every line the daemon writes
// on stderr is one JSON object, whatever hostile text reaches a log line:
// a downstream's stderr (debug level), request paths and queries, refused
// tokens, a refused reload of a hostile file.
func TestOpsJSONLogValid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noisy := fmt.Sprintf("[/bin/sh, -c, %q]", "printf '%s\\n' \"$NOISE\" >&2; printf 'partial \\377\\033]0;title\\007' >&2; exit 3")
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  admin_token: {env: OPS_ADMIN}
mcp_servers:
  - id: noisy
    command: `+noisy+`
    env: {NOISE: `+fmt.Sprintf("%q", strings.ReplaceAll(strings.ToValidUTF8(hostileText, "?"), "\x00", ""))+`}
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [server:noisy]
`)
	d, logs := startLoggedDaemon(t, []string{"OPS_ADMIN=" + adminToken, "DEV_TOKEN=dev-token-0123456789abcdef"}, "--log-level", "debug", "-w", ws)
	try := func(method, path, token, body string) {
		if method == "POST" {
			postMCP(t, d.base+path, token, body)
			return
		}
		req, err := http.NewRequest(method, d.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	try("POST", "/mcp/noisy", "dev-token-0123456789abcdef", init)
	try("POST", "/mcp/%22%5C%1B%FF?a=1;b=%22", "dev-token-0123456789abcdef", init)
	try("POST", "/mcp/noisy", "bad\"token\\%", init)
	try("GET", "/admin/status?x=%00%22;y", "not\"the-admin", "")
	replaceFile(t, ws, []byte("version: 1\nagents:\n  - id: \""+strings.ToValidUTF8(hostileText, "?")+"\"\n    grants: [\"\x1b]x\"]\n"))
	waitFor(t, 20*time.Second, "the hostile reload to be refused", func() bool { return logLine(logs, "reload refused") != nil })
	waitFor(t, 20*time.Second, "the noisy server's stderr in the log", func() bool { return logLine(logs, "mcp server stderr") != nil || logLine(logs, "could not") != nil })

	logs.mu.Lock()
	lines := append([]string(nil), logs.lines...)
	logs.mu.Unlock()
	for i, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["msg"] == nil {
			t.Errorf("log line %d is not one JSON object with a msg (%v): %q", i+1, err, l)
		}
		// Strict: no key twice (a reader keeps either), no lone surrogate.
		if err := strictjson.Valid([]byte(l)); err != nil {
			t.Errorf("log line %d is not strict JSON: %v: %q", i+1, err, l)
		}
	}
	if len(lines) < 5 {
		t.Errorf("only %d log lines: the hostile inputs were not logged", len(lines))
	}
}
