package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// Which bundled packs run against the real program, and which against the
// stand-in (testdata/standin), because the real one needs a network or a
// login: git, rg and jq are real (scripts/ci-deps/bundled.sh installs them);
// gh, claude, codex and opencode are the stand-in.

// buildStandins builds testdata/standin once for the test and links it
// under the names of the programs it plays; it returns the directory.
func buildStandins(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "standin")
	build := exec.Command("go", "build", "-o", bin, "./testdata/standin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build standin: %v\n%s", err, out)
	}
	for _, name := range []string{"gh", "claude", "codex", "opencode", "jobber"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// requireBinaries skips when a real program the test drives is missing,
// naming the script that installs it.
func requireBinaries(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed; run scripts/ci-deps/bundled.sh", n)
			}
			t.Skipf("%s not installed; run scripts/ci-deps/bundled.sh", n)
		}
	}
}

// gitIn runs git in dir for test setup.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

const bundledWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
credentials:
  gh-token: {env: E2E_GH_TOKEN}
command_packs:
  - use: bundled/git
    permission: open
    cwd: repo
  - use: bundled/ripgrep
    cwd: tree
  - use: bundled/json-tools
    permission: open
  - use: bundled/gh
  - use: bundled/coding-agent-claude
    permission: open
    cwd: repo
  - use: bundled/coding-agent-codex
    permission: open
    cwd: repo
  - use: bundled/coding-agent-opencode
    permission: open
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    scopes: [repo:read, repo:write, workspace:read, github:read, agent:delegate]
    grants: [pack:git, git-add, git-commit, pack:ripgrep, pack:json-tools, json-tools-edit-in-place, pack:gh,
             tool:coding-agent-claude:run, tool:coding-agent-claude:start, tool:coding-agent-codex:run,
             tool:coding-agent-opencode:run]
`

const ghSecret = "ghp_e2eSecretTokenValue123"

type bundledEnv struct {
	dir string
	d   *daemon
}

func (b *bundledEnv) client(t *testing.T, surface string) *client.Client {
	return mcpHTTP(t, b.d.base+"/mcp/"+surface, "dev-token-0123456789abcdef")
}

// startBundled lays out a workspace with a real git repository and a
// source tree, and starts the daemon with the stand-ins first on PATH.
func startBundled(t *testing.T) *bundledEnv {
	t.Helper()
	requireBinaries(t, "git", "jq", "rg")
	standins := buildStandins(t)
	dir := t.TempDir()
	writeFile(t, dir, "toolgate.yaml", bundledWorkspace)
	repo := filepath.Join(dir, "repo")
	writeFile(t, repo, "README.md", "first line\nsecond line\n")
	writeFile(t, repo, "src/main.go", "package main\n")
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "config", "user.name", "E2E")
	gitIn(t, repo, "config", "user.email", "e2e@example.invalid")
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "commit", "-q", "-m", "initial commit")
	gitIn(t, repo, "branch", "feature/x")
	tree := filepath.Join(dir, "tree")
	writeFile(t, tree, "a.go", "package a\n// needle one\n// needle two\nvar x = a.b\n")
	writeFile(t, tree, "b.txt", "no match here\nneedle in text\n")
	writeFile(t, tree, "big.go", strings.Repeat("needle ", 200)+"\n")
	writeFile(t, dir, "data.json", `{"name":"toolgate","version":1,"tags":["a","b"]}`)
	env := []string{"DEV_TOKEN=dev-token-0123456789abcdef", "E2E_GH_TOKEN=" + ghSecret,
		"PATH=" + standins + string(os.PathListSeparator) + os.Getenv("PATH")}
	return &bundledEnv{dir: dir, d: startDaemon(t, env, "-w", filepath.Join(dir, "toolgate.yaml"))}
}

type callCase struct {
	name    string
	tool    string
	args    map[string]any
	wantErr bool
	want    []string // substrings of the text
	not     []string // substrings that must not appear
}

func runCases(t *testing.T, cl *client.Client, cases []callCase) {
	t.Helper()
	for _, tc := range cases {
		text, isErr, _, err := call(t, cl, tc.tool, tc.args)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if isErr != tc.wantErr {
			t.Errorf("%s: isError = %v, want %v:\n%s", tc.name, isErr, tc.wantErr, text)
		}
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: result lacks %q:\n%s", tc.name, w, text)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(text, w) {
				t.Errorf("%s: result holds %q:\n%s", tc.name, w, text)
			}
		}
	}
}

func TestBundledGit(t *testing.T) {
	t.Parallel()
	b := startBundled(t)
	cl := b.client(t, "git")
	repo := filepath.Join(b.dir, "repo")
	writeFile(t, repo, "README.md", "first line\nsecond line\nthird line\n")
	runCases(t, cl, []callCase{
		{name: "status", tool: "status", args: map[string]any{}, want: []string{"## main", " M README.md"}},
		{name: "log", tool: "log", args: map[string]any{}, want: []string{"\tE2E\tinitial commit"}},
		{name: "log of a path", tool: "log", args: map[string]any{"rev": "main", "paths": []any{"src"}, "max_count": 1}, want: []string{"initial commit"}},
		{name: "diff", tool: "diff", args: map[string]any{}, want: []string{"+third line"}},
		{name: "show", tool: "show", args: map[string]any{"rev": "HEAD"}, want: []string{"Commit:", "initial commit", "+first line"}},
		{name: "show a file at a revision", tool: "show", args: map[string]any{"rev": "HEAD:README.md"}, want: []string{"first line\nsecond line\n"}, not: []string{"third"}},
		{name: "blame", tool: "blame", args: map[string]any{"file": "README.md", "lines": "2,2"}, want: []string{"second line"}, not: []string{"first line"}},
		{name: "branch list", tool: "branch-list", args: map[string]any{}, want: []string{"main\t", "feature/x\t"}},
		{name: "branch list by glob", tool: "branch-list", args: map[string]any{"pattern": "feature/*"}, want: []string{"feature/x"}, not: []string{"main"}},
		{name: "add", tool: "add", args: map[string]any{"paths": []any{"README.md"}}},
		{name: "diff staged", tool: "diff-staged", args: map[string]any{}, want: []string{"+third line"}},
		// A message starting with "-" and holding shell syntax is the
		// message, whole: it travels inside --message=….
		{name: "commit", tool: "commit", args: map[string]any{"message": "-n fix: third line; $(touch pwned)"}, want: []string{"1 file changed"}},
		{name: "log after commit", tool: "log", args: map[string]any{"max_count": 1}, want: []string{"\t-n fix: third line; $(touch pwned)"}},
	})
	if _, err := os.Stat(filepath.Join(repo, "pwned")); err == nil {
		t.Errorf("a commit message ran a shell")
	}
}

// TestBundledGitInjection: the argument-injection cases of the git CVEs
// are refused before git runs (or, after "--", reach git as paths), and no
// file an option would have written appears.
func TestBundledGitInjection(t *testing.T) {
	t.Parallel()
	b := startBundled(t)
	cl := b.client(t, "git")
	repo := filepath.Join(b.dir, "repo")
	runCases(t, cl, []callCase{
		{name: "log --output", tool: "log", args: map[string]any{"rev": "--output=pwned-log"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "log --upload-pack", tool: "log", args: map[string]any{"rev": "--upload-pack=touch pwned-up"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "diff --output", tool: "diff", args: map[string]any{"from": "--output=pwned-diff"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "diff to -p", tool: "diff", args: map[string]any{"from": "HEAD", "to": "-p"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "show ref starting with -", tool: "show", args: map[string]any{"rev": "--output=pwned-show"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "blame rev", tool: "blame", args: map[string]any{"file": "README.md", "rev": "--contents=/etc/passwd"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "blame lines", tool: "blame", args: map[string]any{"file": "README.md", "lines": "1,1 --output=x"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "branch pattern", tool: "branch-list", args: map[string]any{"pattern": "-D"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "extra argument", tool: "status", args: map[string]any{"extra": "--porcelain"}, wantErr: true, want: []string{"DENIED: "}},
		// After "--" an option-looking value is a path name: git finds no
		// such path and writes nothing.
		{name: "path after --", tool: "log", args: map[string]any{"paths": []any{"--output=pwned-path"}}},
		{name: "add path after --", tool: "add", args: map[string]any{"paths": []any{"--chmod=+x"}}, wantErr: true, want: []string{"did not match any files"}},
	})
	for _, f := range []string{"pwned-log", "pwned-up", "pwned-diff", "pwned-show", "pwned-path", "x"} {
		if _, err := os.Stat(filepath.Join(repo, f)); err == nil {
			t.Errorf("%s was written: an argument became an option", f)
		}
	}
	audit, err := os.ReadFile(filepath.Join(b.dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(audit), `"decision":"deny"`); n != 9 {
		t.Errorf("%d deny events in the audit, want 9", n)
	}
}

func TestBundledRipgrep(t *testing.T) {
	t.Parallel()
	b := startBundled(t)
	cl := b.client(t, "ripgrep")
	runCases(t, cl, []callCase{
		{name: "search", tool: "search", args: map[string]any{"pattern": `needle \w+`}, want: []string{"a.go:2:// needle one", "a.go:3:// needle two", "b.txt:2:needle in text"}},
		{name: "search bounded per file", tool: "search", args: map[string]any{"pattern": "needle", "max_count": 1, "glob": "*.go"}, want: []string{"a.go:2:"}, not: []string{"a.go:3:", "b.txt"}},
		{name: "long lines shortened", tool: "search", args: map[string]any{"pattern": "needle", "paths": []any{"big.go"}}, want: []string{"big.go:1:", "omitted"}},
		{name: "fixed string", tool: "search-fixed", args: map[string]any{"text": "a.b"}, want: []string{"a.go:4:var x = a.b"}},
		{name: "count", tool: "count", args: map[string]any{"pattern": "needle"}, want: []string{"a.go:2", "b.txt:1"}},
		{name: "files", tool: "files", args: map[string]any{"glob": "*.txt"}, want: []string{"b.txt"}, not: []string{"a.go"}},
		// An option-looking pattern is a pattern (inside --regexp=…); no
		// --pre program runs.
		{name: "pattern is never an option", tool: "search-fixed", args: map[string]any{"text": "--pre=touch"}, wantErr: true, want: []string{"exit status 1"}},
		{name: "path is never an option", tool: "search", args: map[string]any{"pattern": "x", "paths": []any{"--pre=touch"}}, wantErr: true, want: []string{"--pre=touch: No such file"}},
	})
}

func TestBundledJSONTools(t *testing.T) {
	t.Parallel()
	b := startBundled(t)
	cl := b.client(t, "json-tools")
	data := filepath.Join(b.dir, "data.json")
	runCases(t, cl, []callCase{
		{name: "query", tool: "query", args: map[string]any{"filter": ".tags[1]", "file": data}, want: []string{`"b"`}},
		{name: "keys", tool: "keys", args: map[string]any{"file": data}, want: []string{`["name","tags","version"]`}},
		{name: "validate", tool: "validate", args: map[string]any{"file": filepath.Join(b.dir, "toolgate.yaml")}, wantErr: true},
		{name: "edit in place", tool: "edit-in-place", args: map[string]any{"filter": ".version = 2", "file": data}, want: []string{"[wrote " + data + "]"}},
		{name: "failed edit leaves the file", tool: "edit-in-place", args: map[string]any{"filter": ".version +", "file": data}, wantErr: true, want: []string{"left unchanged"}},
	})
	got, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(got, &doc); err != nil || doc["version"] != float64(2) {
		t.Errorf("data.json after edits = %s (%v)", got, err)
	}
}

// TestBundledGH runs the gh pack against the stand-in (the real gh needs
// network and a login): argv as the pack builds it, the token only in the
// environment, and redacted from the result and the audit.
func TestBundledGH(t *testing.T) {
	t.Parallel()
	b := startBundled(t)
	cl := b.client(t, "gh")
	argvOf := func(tool string, args map[string]any) []string {
		t.Helper()
		text, isErr, res, err := call(t, cl, tool, args)
		if err != nil || isErr {
			t.Fatalf("%s: %v %s", tool, err, text)
		}
		if strings.Contains(text, ghSecret) {
			t.Errorf("%s: the token reached the result", tool)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var out struct {
			Argv  []string `json:"argv"`
			Token string   `json:"gh_token"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, raw, err)
		}
		if out.Token != "[REDACTED:gh-token]" {
			t.Errorf("%s: gh saw token %q in its env, want the credential (redacted in the result)", tool, out.Token)
		}
		return out.Argv
	}
	prFields := "number,title,state,author,headRefName,baseRefName,isDraft,url,createdAt"
	tests := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"pr-list", map[string]any{}, []string{"pr", "list", "--json", prFields}},
		{"pr-list", map[string]any{"repo": "cli/cli", "state": "merged", "limit": 5}, []string{"pr", "list", "--repo=cli/cli", "--state=merged", "--limit=5", "--json", prFields}},
		{"pr-view", map[string]any{"number": 42, "repo": "cli/cli"}, []string{"pr", "view", "42", "--repo=cli/cli", "--json"}},
		{"issue-list", map[string]any{"label": "bug", "search": "--web"}, []string{"issue", "list", "--label=bug", "--search=--web", "--json"}},
		{"issue-view", map[string]any{"number": 7}, []string{"issue", "view", "7", "--json"}},
	}
	for _, tt := range tests {
		got := argvOf(tt.tool, tt.args)
		if n := len(tt.want); len(got) < n || !slices.Equal(got[:n-1], tt.want[:n-1]) || !slices.Contains(got, tt.want[n-1]) {
			t.Errorf("%s %v: argv %q, want it to start %q", tt.tool, tt.args, got, tt.want)
		}
	}
	runCases(t, cl, []callCase{
		{name: "repo as an option", tool: "pr-list", args: map[string]any{"repo": "-R evil/repo"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "negative number", tool: "pr-view", args: map[string]any{"number": -1}, wantErr: true, want: []string{"DENIED: "}},
		{name: "no write command", tool: "pr-merge", args: map[string]any{"number": 1}, wantErr: true, want: []string{`DENIED: unknown tool "gh:pr-merge"`}},
	})
	audit, err := os.ReadFile(filepath.Join(b.dir, "audit.jsonl"))
	if err != nil || strings.Contains(string(audit), ghSecret) {
		t.Errorf("audit holds the token (or is unreadable: %v)", err)
	}
}

// TestBundledCodingAgents runs the three coding-agent packs against the
// stand-in (the real CLIs need a login and a model): the prompt is one
// argv element (after "--" for claude and codex), the working directory is
// the workspace-relative cwd, and modes that widen the child's permissions
// are refused.
func TestBundledCodingAgents(t *testing.T) {
	t.Parallel()
	b := startBundled(t)
	prompt := "fix the bug; rm -rf / && $(id) `id` --dangerously-skip-permissions"
	type standinOut struct {
		Program string   `json:"program"`
		Argv    []string `json:"argv"`
		Cwd     string   `json:"cwd"`
	}
	tests := []struct {
		surface, tool string
		args          map[string]any
		want          []string
		cwd           string
	}{
		{"coding-agent-claude", "run", map[string]any{"prompt": prompt}, []string{"--print", "--output-format=text", "--", prompt}, "repo"},
		{"coding-agent-claude", "run", map[string]any{"prompt": "-h", "mode": "plan", "max_turns": 3}, []string{"--print", "--output-format=text", "--permission-mode=plan", "--max-turns=3", "--", "-h"}, "repo"},
		{"coding-agent-codex", "run", map[string]any{"prompt": prompt, "sandbox": "workspace-write"}, []string{"exec", "--color=never", "--sandbox=workspace-write", "--", prompt}, "repo"},
		{"coding-agent-opencode", "run", map[string]any{"prompt": prompt}, []string{"run", prompt}, ""},
	}
	for _, tt := range tests {
		cl := b.client(t, tt.surface)
		text, isErr, _, err := call(t, cl, tt.tool, tt.args)
		if err != nil || isErr {
			t.Fatalf("%s %s: %v %s", tt.surface, tt.tool, err, text)
		}
		var out standinOut
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("%s: %v\n%s", tt.surface, err, text)
		}
		wantCwd, _ := filepath.EvalSymlinks(filepath.Join(b.dir, tt.cwd))
		gotCwd, _ := filepath.EvalSymlinks(out.Cwd)
		if !slices.Equal(out.Argv, tt.want) || gotCwd != wantCwd {
			t.Errorf("%s: argv %q in %s, want %q in %s", tt.surface, out.Argv, out.Cwd, tt.want, wantCwd)
		}
	}
	claude := b.client(t, "coding-agent-claude")
	codex := b.client(t, "coding-agent-codex")
	opencode := b.client(t, "coding-agent-opencode")
	runCases(t, claude, []callCase{
		{name: "bypass permissions", tool: "run", args: map[string]any{"prompt": "x", "mode": "bypassPermissions"}, wantErr: true, want: []string{"DENIED: "}},
	})
	runCases(t, codex, []callCase{
		{name: "full access sandbox", tool: "run", args: map[string]any{"prompt": "x", "sandbox": "danger-full-access"}, wantErr: true, want: []string{"DENIED: "}},
		{name: "start not granted", tool: "start", args: map[string]any{"prompt": "x"}, wantErr: true, want: []string{"DENIED: unknown tool"}},
	})
	runCases(t, opencode, []callCase{
		{name: "prompt as an option", tool: "run", args: map[string]any{"prompt": "--model=evil"}, wantErr: true, want: []string{"DENIED: "}},
	})
	// The background form: a job id at once, then status and logs.
	text, isErr, res, err := call(t, claude, "start", map[string]any{"prompt": "summarise the repo"})
	if err != nil || isErr {
		t.Fatalf("start: %v %s", err, text)
	}
	id := jobIDOf(t, res)
	st := waitJob(t, claude, id, func(v map[string]any) bool { return v["state"] != "running" })
	if st["state"] != "succeeded" {
		t.Fatalf("job ended %v", st)
	}
	logs, _, _, _ := call(t, claude, "job-logs", map[string]any{"job_id": id})
	if !strings.Contains(logs, `"argv":["--print","--output-format=text","--","summarise the repo"]`) || !strings.Contains(logs, "; done]") {
		t.Errorf("job logs:\n%s", logs)
	}
	if names := toolNames(t, codex); slices.Contains(names, "job-status") {
		t.Errorf("codex surface shows job tools %q, but dev holds no background command there", names)
	}
}
