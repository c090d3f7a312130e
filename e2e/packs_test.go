package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

const packsWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  approvals: {wait: 10ms}
command_packs:
  - use: bundled/json-tools
    permission_overrides: {edit-in-place: strict}
  - id: echo
    permission: open
    commands:
      - id: args
        description: Echo argv as JSON.
        argv: [ARGVECHO, "{a}", "--flag={b}"]
        inputs: {type: object, properties: {a: {type: string}, b: {type: string}}, required: [a]}
        effects: read
      - id: after-dashes
        description: Echo argv after a literal --.
        argv: [ARGVECHO, "--", "{a}"]
        inputs: {type: object, properties: {a: {type: string}}, required: [a]}
        effects: read
  - id: files
    permission: readonly
    commands:
      - id: touch
        argv: [touch, "{path}"]
        inputs: {type: object, properties: {path: {type: string}}, required: [path]}
        effects: write
  - id: marker
    permission: strict
    commands:
      - id: touch
        argv: [touch, "{path}"]
        inputs: {type: object, properties: {path: {type: string}}, required: [path]}
        effects: write
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants: [pack:json-tools, pack:echo, tool:files:touch, tool:marker:touch]
  - id: editor
    token: {env: EDITOR_TOKEN}
    grants: [json-tools-edit-in-place]
`

var packsEnv = []string{"READER_TOKEN=reader-secret-token", "EDITOR_TOKEN=editor-secret-token"}

// packsFixture writes the workspace and its data into a fresh directory.
func packsFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(packsWorkspace, "ARGVECHO", argvEcho))
	writeFile(t, dir, "data.json", `{"items":[{"name":"a"},{"name":"b"}]}`)
	writeFile(t, dir, "sentinel", "still here\n")
	return dir
}

// connector opens a session as agent on one surface.
type connector func(t *testing.T, agent, surface string) *client.Client

func transports(t *testing.T, dir string) map[string]connector {
	ws := filepath.Join(dir, "toolgate.yaml")
	tokens := map[string]string{"reader": "reader-secret-token", "editor": "editor-secret-token"}
	var d *daemon
	return map[string]connector{
		"http": func(t *testing.T, agent, surface string) *client.Client {
			if d == nil {
				d = startDaemon(t, packsEnv, "-w", ws)
			}
			return mcpHTTP(t, d.base+"/mcp/"+surface, tokens[agent])
		},
		"stdio": func(t *testing.T, agent, surface string) *client.Client {
			return mcpStdio(t, packsEnv, "serve", "-w", ws, "--agent", agent, "--stdio", "--surface", surface)
		},
	}
}

func TestPacksOverMCP(t *testing.T) {
	for _, name := range []string{"http", "stdio"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := packsFixture(t)
			connect := transports(t, dir)[name]
			reader := connect(t, "reader", "json-tools")
			editor := connect(t, "editor", "json-tools")
			echo := connect(t, "reader", "echo")
			files := connect(t, "reader", "files")
			marker := connect(t, "reader", "marker")
			calls := 0

			if got, want := toolNames(t, reader), []string{"keys", "query", "validate"}; !slices.Equal(got, want) {
				t.Errorf("reader tools = %v, want only the read commands %v", got, want)
			}
			if got := toolNames(t, editor); !slices.Equal(got, []string{"edit-in-place"}) {
				t.Errorf("editor tools = %v, want [edit-in-place]", got)
			}

			text, isErr, _, err := call(t, reader, "query", map[string]any{"filter": ".items[].name", "file": "data.json"})
			calls++
			if err != nil || isErr || text != "\"a\"\n\"b\"\n" {
				t.Errorf("reader query: text %q isError %v err %v; want the two names", text, isErr, err)
			}

			text, isErr, _, _ = call(t, editor, "edit-in-place", map[string]any{"filter": ".x = 1", "file": "data.json"})
			calls++
			if !isErr || !strings.HasPrefix(text, "DENIED: approval pending ap-") {
				t.Errorf("strict write: %q (isError %v), want DENIED: approval pending <id>", text, isErr)
			}

			text, isErr, _, _ = call(t, files, "touch", map[string]any{"path": "made-by-readonly"})
			calls++
			if !isErr || !strings.HasPrefix(text, "DENIED: ") || !strings.Contains(text, "readonly") {
				t.Errorf("readonly write: %q, want a DENIED naming the readonly tier", text)
			}

			text, isErr, _, _ = call(t, marker, "touch", map[string]any{"path": "made-by-strict"})
			calls++
			if !isErr || !strings.HasPrefix(text, "DENIED: ") {
				t.Errorf("strict write: %q, want DENIED", text)
			}
			for _, f := range []string{"made-by-readonly", "made-by-strict"} {
				if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
					t.Errorf("%s exists: a denied call started its process", f)
				}
			}

			text, isErr, _, _ = call(t, reader, "query", map[string]any{"filter": "; rm -rf /", "file": "data.json"})
			calls++
			if !isErr || !strings.Contains(text, "jq: error") || !strings.Contains(text, "syntax error") {
				t.Errorf("injection filter: %q, want an ordinary jq syntax error", text)
			}
			if _, err := os.Stat(filepath.Join(dir, "sentinel")); err != nil {
				t.Errorf("sentinel gone after the injection attempt: %v", err)
			}

			hostile := []string{";", "|", "$(id)", "`id`", "a b  c", "line1\nline2", `"quoted" 'single'`, "*", "~", "x; rm -rf / #"}
			for _, v := range hostile {
				text, isErr, _, err := call(t, echo, "args", map[string]any{"a": v, "b": v})
				calls++
				var argv []string
				if err != nil || isErr || json.Unmarshal([]byte(text), &argv) != nil {
					t.Errorf("echo %q: %q isError %v err %v", v, text, isErr, err)
					continue
				}
				if want := []string{v, "--flag=" + v}; !slices.Equal(argv, want) {
					t.Errorf("echo %q reached the process as %q, want exactly %q", v, argv, want)
				}
			}

			text, isErr, _, _ = call(t, echo, "args", map[string]any{"a": "--upload-pack=evil"})
			calls++
			if !isErr || !strings.HasPrefix(text, "DENIED: ") || !strings.Contains(text, `parameter "a"`) {
				t.Errorf("leading dash: %q, want DENIED naming parameter a", text)
			}
			text, isErr, _, _ = call(t, echo, "after-dashes", map[string]any{"a": "--not-an-option"})
			calls++
			if isErr || !strings.Contains(text, `["--","--not-an-option"]`) {
				t.Errorf("after a literal --: %q, want the value passed through", text)
			}

			// Granted-but-hidden and nonexistent tools get the same refusal,
			// the one a proxied server's tool gets.
			ungranted, isErr, _, err := call(t, reader, "edit-in-place", map[string]any{"filter": ".", "file": "data.json"})
			calls++
			unknown, isErr2, _, err2 := call(t, reader, "no-such-tool", nil)
			calls++
			if err != nil || err2 != nil || !isErr || !isErr2 || !strings.HasPrefix(ungranted, "DENIED: unknown tool") || !strings.HasPrefix(unknown, "DENIED: unknown tool") {
				t.Errorf("ungranted tool: %q (err %v), unknown tool: %q (err %v); want the same DENIED: unknown tool refusal", ungranted, err, unknown, err2)
			}

			checkAudit(t, dir, calls)
		})
	}
}

// checkAudit verifies the run's audit log with the binary and checks one
// decision event per call, each with the payload fields, and that every
// outcome event follows the allow decision it belongs to (write-ahead).
func checkAudit(t *testing.T, dir string, calls int) {
	t.Helper()
	path := filepath.Join(dir, "audit.jsonl")
	if r := toolgate(t, dir, nil, "audit", "verify", path); r.code != 0 {
		t.Fatalf("audit verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, decisions := 0, 0
	allowed := map[int64]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		var ev struct {
			Seq      int64             `json:"seq"`
			Of       *int64            `json:"of"`
			Decision string            `json:"decision"`
			Action   string            `json:"action"`
			Payload  map[string]string `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %d: %v", n, err)
		}
		if ev.Payload["provider"] != "command" || ev.Payload["container"] == "" || ev.Payload["member"] == "" {
			t.Errorf("audit line %d payload %v lacks provider/container/member", n, ev.Payload)
		}
		if _, ok := ev.Payload["effects"]; !ok {
			t.Errorf("audit line %d payload has no effects field", n)
		}
		if strings.Contains(sc.Text(), "secret-token") {
			t.Errorf("audit line %d holds a token", n)
		}
		switch {
		case ev.Of == nil:
			decisions++
			if ev.Decision == "allow" {
				allowed[ev.Seq] = true
			}
		case !allowed[*ev.Of]:
			t.Errorf("audit line %d is the outcome of seq %d, which is no earlier allow decision", n, *ev.Of)
		default:
			delete(allowed, *ev.Of)
		}
	}
	if decisions != calls {
		t.Errorf("audit holds %d decision events for %d calls", decisions, calls)
	}
	if len(allowed) != 0 {
		t.Errorf("allowed calls without an outcome event: seqs %v", allowed)
	}
}

func TestDaemonHTTPBoundaries(t *testing.T) {
	t.Parallel()
	dir := packsFixture(t)
	d := startDaemon(t, packsEnv, "-w", filepath.Join(dir, "toolgate.yaml"))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cases := []struct {
		name   string
		path   string
		header map[string]string
		want   int
	}{
		{"no token", "/mcp/json-tools", nil, http.StatusUnauthorized},
		{"wrong token", "/mcp/json-tools", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"foreign origin", "/mcp/json-tools", map[string]string{"Authorization": "Bearer reader-secret-token", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"rebinding host", "/mcp/json-tools", map[string]string{"Authorization": "Bearer reader-secret-token", "Host": "evil.example"}, http.StatusForbidden},
		{"surface not granted", "/mcp/files-nope", map[string]string{"Authorization": "Bearer editor-secret-token"}, http.StatusNotFound},
		{"granted surface", "/mcp/json-tools", map[string]string{"Authorization": "Bearer reader-secret-token"}, http.StatusOK},
		{"loopback origin not configured", "/mcp/json-tools", map[string]string{"Authorization": "Bearer reader-secret-token", "Origin": "http://localhost:3000"}, http.StatusForbidden},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest("POST", d.base+tc.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range tc.header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: 401 without a Bearer WWW-Authenticate challenge", tc.name)
		}
	}
	big := strings.Repeat("x", 2<<20)
	req, _ := http.NewRequest("POST", d.base+"/mcp/json-tools", strings.NewReader(big))
	req.Header.Set("Authorization", "Bearer reader-secret-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MiB body: status %d, want 413", resp.StatusCode)
	}
}
