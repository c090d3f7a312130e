package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// runCLI runs the toolgate CLI in-process with the real environment.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, getenv: os.Getenv}
	code := c.main(context.Background(), args)
	return code, out.String(), errb.String()
}

// buildConformanceServer builds the real MCP server of the e2e tests
// (e2e/conformance-server) into dir.
func buildConformanceServer(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "conformance-server")
	if out, err := exec.Command("go", "build", "-o", bin, "../../e2e/conformance-server").CombinedOutput(); err != nil {
		t.Fatalf("build conformance server: %v\n%s", err, out)
	}
	return bin
}

// TestInitFromStdioServer: init against the real conformance server over
// stdio writes a workspace that loads, with echo (readOnlyHint: true)
// proposed read and everything else write, each effect commented with its
// annotation; the agent holds the read alone; the lock pins every listed
// tool; check passes; a second init refuses to overwrite without --force.
func TestInitFromStdioServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := buildConformanceServer(t, dir)
	wsPath := filepath.Join(dir, "toolgate.yaml")
	code, stdout, stderr := runCLI("init", "--server", "conf", "-w", wsPath, "--env", "CONFORMANCE_ECHO_DESCRIPTION=Echoes: it # all", "--", bin, "-stdio")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "1 proposed read") || !strings.Contains(stdout, "wrote 43 tool pins") {
		t.Errorf("init's report:\n%s", stdout)
	}
	text, err := os.ReadFile(wsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"      echo: read # review: annotations.readOnlyHint is true\n",
		"      delete_all: write # review: annotations.readOnlyHint is false\n",
		"      json_schema_2020_12_tool: write # review: no annotations.readOnlyHint, so a write\n",
		"    grants:\n      - tool:conf:echo\n",
		"    #   - tool:conf:delete_all\n",
		`      CONFORMANCE_ECHO_DESCRIPTION: "Echoes: it # all"` + "\n",
	} {
		if !strings.Contains(string(text), line) {
			t.Errorf("the workspace lacks %q:\n%s", line, text)
		}
	}
	ws, err := workspace.Load(wsPath)
	if err != nil {
		t.Fatalf("the written workspace does not load: %v", err)
	}
	s := ws.MCPServers[0]
	if !slices.Equal(s.Command, []string{bin, "-stdio"}) || s.Env["CONFORMANCE_ECHO_DESCRIPTION"] != "Echoes: it # all" {
		t.Errorf("server entry: %+v", s)
	}
	for tool, e := range s.Effects {
		if want := workspace.EffectWrite; tool == "echo" && e != workspace.EffectRead || tool != "echo" && e != want {
			t.Errorf("effect of %s: %s", tool, e)
		}
	}
	if len(s.Effects) != 43 || len(ws.Agents) != 1 || len(ws.Agents[0].Grants) != 1 || ws.Agents[0].Grants[0].Op != "tool:conf:echo" {
		t.Errorf("effects %d, agents %+v", len(s.Effects), ws.Agents)
	}
	lock, err := pin.Read(pin.PathFor(wsPath))
	if err != nil {
		t.Fatal(err)
	}
	if len(lock.Surfaces["conf"]) != 43 {
		t.Errorf("the lock pins %d tools of conf, want 43", len(lock.Surfaces["conf"]))
	}
	if code, out, errs := runCLI("check", "-w", wsPath); code != exitOK || !strings.Contains(out, "every tool checked matches its pin") {
		t.Errorf("check of the written workspace: exit %d\n%s%s", code, out, errs)
	}

	// Not overwritten without --force, neither the workspace nor the lock.
	before, _ := os.ReadFile(pin.PathFor(wsPath))
	if code, _, errs := runCLI("init", "--server", "other", "-w", wsPath, "--", bin, "-stdio"); code != exitFail || !strings.Contains(errs, "already exists; pass --force") {
		t.Errorf("second init: exit %d\n%s", code, errs)
	}
	os.Remove(wsPath)
	if code, _, errs := runCLI("init", "--server", "other", "-w", wsPath, "--", bin, "-stdio"); code != exitFail || !strings.Contains(errs, "toolgate.lock already exists") {
		t.Errorf("init beside an old lock: exit %d\n%s", code, errs)
	}
	if after, _ := os.ReadFile(pin.PathFor(wsPath)); !bytes.Equal(before, after) {
		t.Error("a refused init changed the lock")
	}
	if code, _, errs := runCLI("init", "--server", "other", "--agent", "bot", "-w", wsPath, "--force", "--", bin, "-stdio"); code != exitOK {
		t.Fatalf("init --force: exit %d\n%s", code, errs)
	}
	if ws, err := workspace.Load(wsPath); err != nil || ws.MCPServers[0].ID != "other" || ws.Agents[0].ID != "bot" {
		t.Errorf("after --force: %v %+v", err, ws)
	}
}

// TestInitRefusesBadTargets: a server that cannot be listed writes
// nothing, and a wrong command line is a usage error saying what to give.
func TestInitRefusesBadTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wsPath := filepath.Join(dir, "toolgate.yaml")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no server", []string{"--", "srv"}, exitUsage, "--server ID is required"},
		{"bad server id", []string{"--server", "a:b", "--", "srv"}, exitUsage, `--server "a:b" may only use`},
		{"no target", []string{"--server", "s"}, exitUsage, "give the server: --url URL"},
		{"both", []string{"--server", "s", "--url", "http://127.0.0.1:1/mcp", "--", "srv"}, exitUsage, "not both"},
		{"command without --", []string{"--server", "s", "srv"}, exitUsage, "put a stdio server's command after --"},
		{"env with url", []string{"--server", "s", "--url", "http://127.0.0.1:1/mcp", "--env", "A=b"}, exitUsage, "--env is for a stdio server"},
		{"env without =", []string{"--server", "s", "--env", "A", "--", "srv"}, exitUsage, `--env "A": write KEY=VALUE`},
		{"env credential", []string{"--server", "s", "--env", "T={credential.t}", "--", "srv"}, exitUsage, "needs a declared credential"},
		{"bad agent", []string{"--server", "s", "--agent", "my agent", "--", "srv"}, exitUsage, `--agent "my agent"`},
		{"server does not start", []string{"--server", "s", "--", filepath.Join(dir, "no-such-server")}, exitFail, `list the tools of server "s"`},
		{"nothing listens", []string{"--server", "s", "--url", "http://127.0.0.1:1/mcp"}, exitFail, `list the tools of server "s"`},
	}
	for _, tc := range cases {
		code, _, errs := runCLI(append([]string{"init", "-w", wsPath}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", tc.name, code, tc.code, tc.msg, errs)
		}
		if _, err := os.Stat(wsPath); err == nil {
			t.Fatalf("%s: a workspace was written", tc.name)
		}
	}
}

// TestInitRefusesUnservableListings: a server listing a tool no grant can
// name (a hostile or broken server) is refused, naming the tool, rather
// than written into a workspace that would not load.
func TestInitRefusesUnservableListings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ listing, msg string }{
		{`[{"name":"ok"},{"name":"bad name"}]`, `tool named "bad name"`},
		{`[{"name":"a\nb"}]`, `tool named "a\nb"`},
		{`[{"name":"x"},{"name":"x"}]`, `lists tool "x" twice`},
		{`[{"description":"nameless"}]`, "not a tool definition"},
		{`[{"name":"t","annotations":{"readOnlyHint":"true"}}]`, "not a tool definition"},
		{`[{"name":"t"},"t2"]`, "(#1) that is not a tool definition"},
		{`[{"name":"evil: true # "}]`, "which no grant can name"},
	} {
		var raws []json.RawMessage
		if err := json.Unmarshal([]byte(tc.listing), &raws); err != nil {
			t.Fatal(err)
		}
		if _, err := propose("s", raws); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %q", tc.listing, err, tc.msg)
		}
	}
}

// TestYAMLScalarReadsBack: whatever a server or command line hands init,
// the written scalar reads back as exactly that string.
func TestYAMLScalarReadsBack(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"plain", "true", "null", "~", "", " ", "1", "0x10", "1e3", ".inf", "yes", "on",
		"a: b", "a:b", "#x", "x #y", "-", "-stdio", "--", "@scope/pkg", "{x}", "[x]", "*alias", "&anchor", "!tag",
		"x\ny", "'", `"`, `\`, "%", "|", ">", "http://127.0.0.1:8080/mcp?q=1#f", "tab\there", "ünï", "\x00"} {
		text := "v: " + yamlScalar(s) + "\n"
		var got map[string]string
		if err := yaml.Unmarshal([]byte(text), &got); err != nil || got["v"] != s {
			t.Errorf("%q written as %q reads back as %q (%v)", s, text, got["v"], err)
		}
		flow := "v: [" + yamlScalar(s) + "]\n"
		var list map[string][]string
		if err := yaml.Unmarshal([]byte(flow), &list); err != nil || len(list["v"]) != 1 || list["v"][0] != s {
			t.Errorf("%q in a flow list, %q, reads back as %q (%v)", s, flow, list["v"], err)
		}
	}
}

// TestSchemaCommand: `toolgate schema` prints the generated schema, the
// one kept as the golden file.
func TestSchemaCommand(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI("schema")
	if code != exitOK {
		t.Fatalf("schema: exit %d\n%s", code, errs)
	}
	want, err := os.ReadFile("../../workspace/testdata/schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Error("toolgate schema differs from workspace/testdata/schema.json")
	}
	if code, _, errs := runCLI("schema", "extra"); code != exitUsage || !strings.Contains(errs, "toolgate schema > toolgate.schema.json") {
		t.Errorf("schema extra: exit %d\n%s", code, errs)
	}
}
