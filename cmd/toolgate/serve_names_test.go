package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/pin"
)

// parityWorkspace proxies memory (pinned by parityLock) and other (not
// pinned); the cases edit it. The servers are never contacted.
const parityWorkspace = `version: 1
gateway:
  approvals:
    rules:
      - {agent: a, capability: "tool:memory:write_node"}
mcp_servers:
  - id: memory
    url: http://127.0.0.1:1/mcp
    effects: {read_graph: read, write_node: write}
    permission_overrides: {write_node: cautious}
  - id: other
    url: http://127.0.0.1:1/other
    effects: {anything: read}
agents:
  - id: a
    grants: [tool:memory:read_graph, tool:memory:write_node, tool:other:anything]
`

// writeParityLock pins memory's read_graph and write_node beside ws.
func writeParityLock(t *testing.T, ws string) {
	t.Helper()
	l := pin.New()
	var tools []pin.Tool
	for _, name := range []string{"read_graph", "write_node"} {
		tl, err := pin.DigestTool(json.RawMessage(`{"name":"` + name + `","inputSchema":{"type":"object"}}`))
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tl)
	}
	l.SetSurface("memory", tools)
	if err := pin.Write(pin.PathFor(ws), l); err != nil {
		t.Fatal(err)
	}
}

// startedWriter is a serve's stderr: it keeps what is written and calls
// started once the gateway logs that it listens.
type startedWriter struct {
	mu      sync.Mutex
	b       bytes.Buffer
	started func()
}

func (w *startedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(`"msg":"listening"`)) {
		w.started()
	}
	return w.b.Write(p)
}

func (w *startedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestCheckAndServeRefuseTheSameFiles: over workspaces with and without
// misspelt proxied tool names, with and without toolgate.lock, `check
// --offline` fails exactly when `serve` refuses to start, and both print
// the same FILE:LINE:COL errors.
func TestCheckAndServeRefuseTheSameFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		edit   func(string) string
		noLock bool
		refuse string // an error both print; "" when both accept
	}{
		{name: "good", edit: func(s string) string { return s }},
		{name: "misspelt grant", edit: replace("grants: [tool:memory:read_graph", "grants: [tool:memory:read_grahp"),
			refuse: `toolgate.yaml:16:14: agent "a" grant "tool:memory:read_grahp" names tool "read_grahp"`},
		{name: "misspelt effects key", edit: replace("write_node: write", "write_nod: write"),
			refuse: `(did you mean "write_node"?)`},
		{name: "misspelt override key", edit: replace("{write_node: cautious}", "{writenode: cautious}"),
			refuse: `permission_overrides names tool "writenode"`},
		{name: "misspelt approval rule", edit: replace(`"tool:memory:write_node"}`, `"tool:memory:write_ndoe"}`),
			refuse: `approval rule "tool:memory:write_ndoe" names tool "write_ndoe"`},
		{name: "server not pinned", edit: replace("{anything: read}", "{anythign: read}")},
		{name: "no lock", noLock: true, edit: replace("grants: [tool:memory:read_graph", "grants: [tool:memory:read_grahp")},
		{name: "not a names error", edit: replace("write_node: write", "write_node: writes"), refuse: "writes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ws := filepath.Join(dir, "toolgate.yaml")
			if err := os.WriteFile(ws, []byte(tc.edit(parityWorkspace)), 0o644); err != nil {
				t.Fatal(err)
			}
			if !tc.noLock {
				writeParityLock(t, ws)
			}
			var out, checkErr bytes.Buffer
			c := &cli{stdout: &out, stderr: &checkErr, getenv: func(string) string { return "" }}
			checkCode := c.main(context.Background(), []string{"check", "--offline", "-w", ws})

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			serveErr := &startedWriter{started: cancel}
			s := &cli{stdout: &out, stderr: serveErr, getenv: func(string) string { return "" }}
			serveCode := s.main(ctx, []string{"--log-format", "json", "serve", "--listen", "127.0.0.1:0", "-w", ws})

			if (checkCode == exitOK) != (serveCode == exitOK) {
				t.Fatalf("check exit %d, serve exit %d\ncheck: %s\nserve: %s", checkCode, serveCode, checkErr.String(), serveErr.String())
			}
			if tc.refuse == "" {
				if checkCode != exitOK {
					t.Fatalf("both refused a good file:\n%s", checkErr.String())
				}
				return
			}
			if checkCode == exitOK {
				t.Fatalf("both accepted, want %q refused", tc.refuse)
			}
			if !strings.Contains(located(ws, checkErr.String()), tc.refuse) {
				t.Errorf("check's errors lack %q:\n%s", tc.refuse, checkErr.String())
			}
			if got, want := located(ws, serveErr.String()), located(ws, checkErr.String()); got != want {
				t.Errorf("serve printed\n%s\ncheck printed\n%s", got, want)
			}
		})
	}
}

func replace(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("the edit matches nothing: " + old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

// located is the lines of out at a position in the file ws.
func located(ws, out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, ws+":") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
