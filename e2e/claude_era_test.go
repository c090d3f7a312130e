package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// TestClaudeCodeEra records which protocol era Claude Code speaks through
// toolgate over stdio: what it sent and what came back are captured by tee
// on either side of `toolgate serve --stdio`. Claude Code 2.1.332 probes
// with server/discover and then makes every request stateless
// (2026-07-28 in _meta), with subscriptions/listen for list changes; the
// call's result comes back in that era (every request checked; notifications
// need not carry _meta).
func TestClaudeCodeEra(t *testing.T) {
	t.Parallel()
	claude := claudeBinary(t)
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl}
command_packs:
  - use: bundled/json-tools
    permission: cautious
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants:
      - pack:json-tools
`)
	in := filepath.Join(dir, "in.jsonl")
	out := filepath.Join(dir, "out.jsonl")
	cfg := `{"mcpServers":{"json-tools":{"type":"stdio","command":"sh","args":["-c","tee ` + in + ` | ` + binary + ` serve -w ` + ws + ` --agent reader --stdio --surface json-tools | tee ` + out + `"],"env":{"READER_TOKEN":"reader-token-0123456789"}}}}`
	mc := writeFile(t, dir, "mcp.json", cfg)
	data := writeFile(t, dir, "data.json", `{"name":"toolgate"}`)
	model := scriptedmodel.Start(scriptedmodel.Options{MainTool: "mcp__json-tools__query", FinalText: "all done", Turns: []scriptedmodel.Turn{
		{{Name: "mcp__json-tools__query", Input: map[string]any{"filter": ".name", "file": data}}},
	}})
	defer model.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "go", "--output-format", "json", "--mcp-config", mc, "--strict-mcp-config", "--allowed-tools", "mcp__json-tools__query")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "ENABLE_TOOL_SEARCH=false"}
	cmd.Env = append(cmd.Env, coverEnv()...)
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claude: %v\n%s", err, o)
	}
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
		Result map[string]json.RawMessage `json:"result"`
	}
	lines := func(path string) []msg {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var ms []msg
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m msg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: %v: %s", path, err, sc.Bytes())
			}
			ms = append(ms, m)
		}
		return ms
	}
	sent, got := lines(in), lines(out)
	if len(sent) == 0 || sent[0].Method != "server/discover" {
		t.Fatalf("Claude Code's first message is not server/discover: %+v", sent)
	}
	var call *msg
	for i, m := range sent {
		if m.Method == "initialize" {
			t.Errorf("Claude Code fell back to initialize: %+v", m)
		}
		if v := string(m.Params.Meta["io.modelcontextprotocol/protocolVersion"]); m.Method != "" && len(m.ID) > 0 && v != `"2026-07-28"` {
			t.Errorf("%s sent with protocolVersion %s, want \"2026-07-28\"", m.Method, v)
		}
		if m.Method == "tools/call" {
			call = &sent[i]
		}
	}
	if call == nil {
		t.Fatalf("Claude Code made no tools/call: %+v", sent)
	}
	for _, m := range got {
		if string(m.ID) == string(call.ID) {
			if string(m.Result["resultType"]) != `"complete"` || !bytes.Contains(m.Result["content"], []byte("toolgate")) {
				t.Errorf("the call's result: %v", m.Result)
			}
			return
		}
	}
	t.Errorf("no answer to the tools/call (id %s) in what toolgate sent", call.ID)
}
