package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/lmittmann/tint"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/audit"
	commandpacks "github.com/toolgate/toolgate/examples/command-packs"
	"github.com/toolgate/toolgate/gateway"
)

// runDemo serves the embedded command-packs workspace on a loopback port
// and drives it with a real MCP client as two agents, printing what each
// call was decided and what it returned.
func runDemo(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("demo", "demo [--keep DIR]")
	keep := fs.String("keep", "", "write the demo workspace, data and audit log into DIR and keep them")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	dir := *keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "toolgate-demo-")
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate demo: %v\n", err)
			return exitFail
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := writeDemoFiles(dir); err != nil {
		fmt.Fprintf(c.stderr, "toolgate demo: %v\n", err)
		return exitFail
	}
	d := &demo{out: c.stdout, dir: dir, tokens: map[string]string{"READER_TOKEN": randomToken(), "EDITOR_TOKEN": randomToken(), "TOOLGATE_ADMIN_TOKEN": randomToken()}}
	getenv := func(k string) string {
		if v, ok := d.tokens[k]; ok {
			return v
		}
		return c.getenv(k)
	}
	wsPath := filepath.Join(dir, "toolgate.yaml")
	// The transcript is the demo's output; per-call logs would interleave
	// with it on a terminal, so only warnings are logged.
	quiet := slog.New(tint.NewTextHandler(c.stderr, &tint.Options{Level: slog.LevelWarn, NoColor: !isTerminal(c.stderr)}))
	g, err := gateway.Open(ctx, wsPath, gateway.Options{Getenv: getenv, Logger: quiet})
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	defer g.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate demo: %v\n", err)
		return exitFail
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- g.Serve(serveCtx, ln, gateway.HTTPOptions{}) }()
	d.base = "http://" + ln.Addr().String()
	err = d.run(ctx)
	stop()
	<-served
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate demo: %v\n", err)
		return exitFail
	}
	return d.verifyAudit(gateway.AuditPath(g.Workspace()))
}

func writeDemoFiles(dir string) error {
	return fs.WalkDir(commandpacks.Files, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := commandpacks.Files.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type demo struct {
	out    io.Writer
	dir    string
	base   string
	tokens map[string]string
	step   int
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, format+"\n", args...) }

// connect opens an MCP session as agent on one surface's endpoint.
func (d *demo) connect(ctx context.Context, tokenVar, surface string) (*client.Client, error) {
	cl, err := client.NewStreamableHttpClient(d.base+"/mcp/"+surface,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + d.tokens[tokenVar]}))
	if err != nil {
		return nil, err
	}
	if err := cl.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "toolgate-demo", Version: version}
	if _, err := cl.Initialize(ctx, init); err != nil {
		cl.Close()
		return nil, fmt.Errorf("initialize %s: %w", surface, err)
	}
	return cl, nil
}

func (d *demo) run(ctx context.Context) error {
	d.say("toolgate demo: the command-packs workspace (examples/command-packs/toolgate.yaml),")
	d.say("served over MCP streamable HTTP on a loopback port; every call below is a real")
	d.say("tools/call from an MCP client, decided by the grant checker and audited.")
	d.say("Agents: reader holds pack:json-tools and pack:notes; editor holds json-tools-edit-in-place.")

	reader, err := d.connect(ctx, "READER_TOKEN", "json-tools")
	if err != nil {
		return err
	}
	defer reader.Close()
	editor, err := d.connect(ctx, "EDITOR_TOKEN", "json-tools")
	if err != nil {
		return err
	}
	defer editor.Close()
	notes, err := d.connect(ctx, "READER_TOKEN", "notes")
	if err != nil {
		return err
	}
	defer notes.Close()

	for _, who := range []struct {
		name string
		cl   *client.Client
	}{{"reader", reader}, {"editor", editor}} {
		list, err := who.cl.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			return err
		}
		var names []string
		for _, t := range list.Tools {
			names = append(names, t.Name)
		}
		d.say("\n%s sees on /mcp/json-tools: %s", who.name, strings.Join(names, ", "))
	}

	calls := []struct {
		title string
		agent string
		cl    *client.Client
		tool  string
		args  map[string]any
	}{
		{"a read command runs unattended (cautious tier, effects: read)", "reader", reader, "query",
			map[string]any{"filter": ".services[].name", "file": "data/services.json"}},
		{"a read command with JSON output comes back as structuredContent", "reader", reader, "keys",
			map[string]any{"file": "data/services.json"}},
		{"a write stops at a governance decision (edit-in-place is strict)", "editor", editor, "edit-in-place",
			map[string]any{"filter": ".version = 2", "file": "data/services.json"}},
		{"a write the agent was never granted is not even listed, and its call gets the same refusal as an unknown tool", "reader", reader, "edit-in-place",
			map[string]any{"filter": ".version = 2", "file": "data/services.json"}},
		{"the readonly notes pack runs its read command", "reader", notes, "list",
			map[string]any{"dir": "data/notes"}},
		{"the readonly notes pack refuses its write command, whoever holds it", "reader", notes, "remove",
			map[string]any{"path": "data/notes/todo.md"}},
		{"injection: a filter of `; rm -rf /` is one inert argv element, so jq reports an ordinary error", "reader", reader, "query",
			map[string]any{"filter": "; rm -rf /", "file": "data/services.json"}},
		{"argument injection: a value starting with '-' is refused before anything runs", "reader", reader, "query",
			map[string]any{"filter": "--rawfile=/etc/passwd", "file": "data/services.json"}},
	}
	for _, call := range calls {
		d.step++
		argsJSON, _ := json.Marshal(call.args)
		d.say("\n[%d] %s", d.step, call.title)
		d.say("    %s calls %s %s", call.agent, call.tool, argsJSON)
		d.printResult(call.cl.CallTool(ctx, callRequest(call.tool, call.args)))
	}
	for _, f := range []string{"data/notes/todo.md", "toolgate.yaml", "data/services.json"} {
		if _, err := os.Stat(filepath.Join(d.dir, f)); err != nil {
			return fmt.Errorf("after the injection attempt %s is gone: %w", f, err)
		}
	}
	d.say("\nafter the injection attempt data/notes/todo.md, data/services.json and toolgate.yaml all still exist.")
	return nil
}

func callRequest(tool string, args map[string]any) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	return req
}

func (d *demo) printResult(res *mcp.CallToolResult, err error) {
	if err != nil {
		d.say("    → refused by the server: %v", err)
		return
	}
	var text []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			text = append(text, strings.TrimRight(t.Text, "\n"))
		}
	}
	status := "ok"
	if res.IsError {
		status = "error"
	}
	d.say("    → %s:", status)
	for _, line := range strings.Split(strings.Join(text, "\n"), "\n") {
		d.say("      %s", line)
	}
	if res.StructuredContent != nil {
		sc, _ := json.Marshal(res.StructuredContent)
		d.say("      structuredContent: %s", sc)
	}
}

func (d *demo) verifyAudit(path string) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(d.out, "audit: %v\n", err)
		return exitFail
	}
	defer f.Close()
	rep, err := audit.Verify(f)
	if err != nil {
		d.say("\naudit log FAILED verification: %v", err)
		return exitFail
	}
	d.say("\naudit log: %d events — a decision for every call, written before anything runs, and an outcome for every call that ran — hash chain verified (toolgate audit verify).", rep.Events)
	return exitOK
}
