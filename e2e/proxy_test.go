package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// proxyWorkspace declares the conformance server twice, over streamable
// HTTP (httpURL) and over stdio, with one agent holding a few of its tools.
func proxyWorkspace(t *testing.T, httpURL, extra string) string {
	t.Helper()
	dir := t.TempDir()
	bin := conformanceServer(t)
	ws := `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  approvals: {wait: 10ms}
mcp_servers:
  - id: confhttp
    url: ` + httpURL + `
    effects: {echo: read, calls: read, json_schema_2020_12_tool: read}
  - id: confstdio
    command: [` + bin + `, -stdio]
    effects: {echo: read, calls: read, json_schema_2020_12_tool: read}
` + extra + `agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants:
      - op: tool:confhttp:echo
        param_constraints: {text: {enum: [hello, world]}}
      - tool:confhttp:calls
      - tool:confhttp:json_schema_2020_12_tool
      - tool:confhttp:delete_all
      - op: tool:confstdio:echo
        param_constraints: {text: {enum: [hello, world]}}
      - tool:confstdio:calls
      - tool:confstdio:json_schema_2020_12_tool
      - tool:confstdio:delete_all
`
	return writeFile(t, dir, "toolgate.yaml", ws)
}

// TestProxyGovernsTools: through the proxy an agent sees only its granted
// tools, under their own names, byte for byte except a narrowed schema;
// allowed calls reach the server, refused ones never do, and every
// decision is audited as mcp:call.
func TestProxyGovernsTools(t *testing.T) {
	httpURL := startConfHTTP(t)
	ws := proxyWorkspace(t, httpURL, "")
	d := startDaemon(t, []string{"READER_TOKEN=rt-0123456789abcdef"}, "-w", ws)
	direct := rawConnect(t, httpURL, "")
	_, directTools := direct.rawTools()

	for _, server := range []string{"confhttp", "confstdio"} {
		t.Run(server, func(t *testing.T) {
			s := rawConnect(t, d.base+"/mcp/"+server, "rt-0123456789abcdef")
			defer s.close()
			names, tools := s.rawTools()
			want := []string{"echo", "calls", "delete_all", "json_schema_2020_12_tool"}
			slices.Sort(names)
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("tools/list = %v, want %v", names, want)
			}
			if got, want := string(tools["json_schema_2020_12_tool"]), string(directTools["json_schema_2020_12_tool"]); got != want {
				t.Errorf("unnarrowed tool changed in transit:\n got %s\nwant %s", got, want)
			}
			var echo struct {
				InputSchema struct {
					Properties map[string]struct {
						Enum []string `json:"enum"`
					} `json:"properties"`
				} `json:"inputSchema"`
				Annotations map[string]any `json:"annotations"`
			}
			if err := json.Unmarshal(tools["echo"], &echo); err != nil {
				t.Fatal(err)
			}
			if e := echo.InputSchema.Properties["text"].Enum; !slices.Equal(e, []string{"hello", "world"}) {
				t.Errorf("echo schema not narrowed: enum %v in %s", e, tools["echo"])
			}
			if echo.Annotations["readOnlyHint"] != true {
				t.Errorf("echo annotations not passed through: %s", tools["echo"])
			}

			before, _ := s.callText("calls", nil)
			if text, isErr := s.callText("echo", map[string]any{"text": "hello"}); isErr || text != "hello" {
				t.Errorf("allowed echo = %q (isError %v)", text, isErr)
			}
			refusals := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"echo", map[string]any{"text": "bye"}, "DENIED: "},
				{"delete_all", nil, "DENIED: approval pending"},
				{"test_simple_text", nil, "DENIED: "},
				{"no_such_tool", nil, "DENIED: "},
			}
			for _, r := range refusals {
				text, isErr := s.callText(r.tool, r.args)
				if !isErr || !strings.HasPrefix(text, r.want) {
					t.Errorf("%s: got %q (isError %v), want a refusal starting %q", r.tool, text, isErr, r.want)
				}
			}
			after, _ := s.callText("calls", nil)
			// Between the two counts only echo reached the server (and the
			// second count itself is excluded by the tool).
			if server == "confhttp" && !countsDiffer(before, after, 2) {
				t.Errorf("server calls went %s → %s; want exactly the allowed echo and calls to reach it", before, after)
			}
			if server == "confstdio" && !countsDiffer(before, after, 2) {
				t.Errorf("server calls went %s → %s; want exactly the allowed echo and calls to reach it", before, after)
			}
		})
	}

	audit, err := os.ReadFile(filepath.Join(filepath.Dir(ws), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"action":"mcp:call:confhttp:echo","decision":"allow"`,
		`"action":"mcp:call:confstdio:delete_all","decision":"approval"`,
		`"provider":"mcp","container":"confhttp","member":"echo","effects":"read"`,
	} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("audit lacks %s:\n%s", want, audit)
		}
	}
}

func countsDiffer(before, after string, by int) bool {
	var b, a int
	if _, err := fmtSscan(before, &b); err != nil {
		return false
	}
	if _, err := fmtSscan(after, &a); err != nil {
		return false
	}
	return a-b == by
}

// TestProxyStdioClient: a harness launching `toolgate serve --agent A
// --stdio --surface <server>` sees the same governed surface.
func TestProxyStdioClient(t *testing.T) {
	httpURL := startConfHTTP(t)
	ws := proxyWorkspace(t, httpURL, "")
	for _, server := range []string{"confhttp", "confstdio"} {
		t.Run(server, func(t *testing.T) {
			cl := mcpStdio(t, nil, "serve", "-w", ws, "--agent", "reader", "--stdio", "--surface", server)
			names := toolNames(t, cl)
			slices.Sort(names)
			if want := []string{"calls", "delete_all", "echo", "json_schema_2020_12_tool"}; !slices.Equal(names, want) {
				t.Fatalf("tools = %v, want %v", names, want)
			}
			if text, isErr, _, err := call(t, cl, "echo", map[string]any{"text": "world"}); err != nil || isErr || text != "world" {
				t.Errorf("echo: %q %v %v", text, isErr, err)
			}
			if text, isErr, _, err := call(t, cl, "echo", map[string]any{"text": "other"}); err != nil || !isErr || !strings.HasPrefix(text, "DENIED: ") {
				t.Errorf("constrained echo: %q %v %v", text, isErr, err)
			}
		})
	}
}
