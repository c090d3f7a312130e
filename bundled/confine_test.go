package bundled_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// Every escape route from an interpreter or a pattern language we could
// find, tried against the real jq, rg and git through the same steps the
// gateway takes: decide (schema, constraints), PrepareBound with the
// grant's path_within roots, Run.

const confineWorkspace = `version: 1
command_packs:
  - use: bundled/json-tools
  - use: bundled/ripgrep
  - use: bundled/git
    cwd: repo
agents:
  - id: a
    scopes: [workspace:read, repo:read]
    grants:
      - op: tool:json-tools:query
        param_constraints: {file: {path_within: data}}
      - op: tool:json-tools:keys
        param_constraints: {file: {path_within: data}}
      - op: tool:ripgrep:search
        param_constraints: {paths: {path_within: data}}
      - op: tool:ripgrep:files
        param_constraints: {paths: {path_within: data}}
      - pack:git
`

type confineEnv struct {
	dir    string
	home   string
	ws     *workspace.Workspace
	policy *grantcheck.Policy
	runner *packs.Runner
}

func newConfineEnv(t *testing.T) *confineEnv {
	t.Helper()
	for _, p := range []string{"jq", "rg", "git"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is needed (scripts/ci-deps/bundled.sh installs it): %v", p, err)
		}
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"toolgate.yaml":         confineWorkspace,
		"data/in.json":          `{"a": 1, "note": "needle inside"}`,
		"outside/secret.json":   `{"secret": "OUTSIDE-SECRET"}`,
		"outside/lib.jq":        `def evil: "OUTSIDE-LIB";`,
		"outside/notes.txt":     "needle OUTSIDE-SECRET\n",
		"home/.jq":              `def leaked: "HOME-LIB";`,
		"home/rg.conf":          "--pre=touch\n",
		"repo/README.md":        "hello\n",
		"data/sub/nested.json":  `{"b": 2}`,
		"outside/other.txt":     "OUTSIDE-SECRET\n",
		"data/notes/needle.txt": "needle in data\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = filepath.Join(dir, "repo")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", ".")
	git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "init")
	ws, err := workspace.Load(filepath.Join(dir, "toolgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := grantcheck.Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": home, "LANG": "C.UTF-8", "TMPDIR": t.TempDir(),
		"GATEWAY_TOKEN": "gateway-secret", "RIPGREP_CONFIG_PATH": filepath.Join(home, "rg.conf")}
	r := packs.NewRunner(nil, func(k string) string { return env[k] })
	r.BaseDir = dir
	return &confineEnv{dir: dir, home: home, ws: ws, policy: pol, runner: r}
}

// call runs one call the way the gateway does and returns its text: the
// output, or "DENIED: " and the reason, or "FAILED: " and the error.
func (e *confineEnv) call(t *testing.T, surface, member string, args map[string]any) string {
	t.Helper()
	d := e.policy.Decide("a", surface, member, args)
	if d.Outcome != grantcheck.Allow {
		return "DENIED: " + d.Reason
	}
	var pack *workspace.CommandPack
	for _, p := range e.ws.CommandPacks {
		if p.ID == surface {
			pack = p
		}
	}
	cmd := commandNamed(t, pack, member)
	inv, err := e.runner.PrepareBound(pack, cmd, args, e.policy.PathRoots("a", surface, member))
	if err != nil {
		return "DENIED: " + err.Error()
	}
	res, err := e.runner.Run(context.Background(), inv)
	if err != nil {
		return "DENIED: " + err.Error()
	}
	if !res.OK() {
		return "FAILED: " + res.Err + "\n" + res.StderrTail
	}
	return string(res.Stdout)
}

func commandNamed(t *testing.T, p *workspace.CommandPack, id string) *workspace.Command {
	t.Helper()
	for _, c := range p.Commands {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("%s has no command %s", p.ID, id)
	return nil
}

type route struct {
	name          string
	surface, tool string
	args          map[string]any
	want          string   // prefix of the text: "DENIED: ", "FAILED: " or "" (ran)
	has           []string // substrings the text must hold
}

func (e *confineEnv) check(t *testing.T, routes []route) {
	t.Helper()
	for _, rt := range routes {
		got := e.call(t, rt.surface, rt.tool, rt.args)
		if strings.Contains(got, "OUTSIDE-") || strings.Contains(got, "HOME-LIB") || strings.Contains(got, "gateway-secret") {
			t.Errorf("%s: reached what it must not:\n%s", rt.name, got)
		}
		if !strings.HasPrefix(got, rt.want) || rt.want == "" && (strings.HasPrefix(got, "DENIED: ") || strings.HasPrefix(got, "FAILED: ")) {
			t.Errorf("%s: got\n%s\nwant it to start with %q", rt.name, got, rt.want)
		}
		for _, h := range rt.has {
			if !strings.Contains(got, h) {
				t.Errorf("%s: lacks %q:\n%s", rt.name, h, got)
			}
		}
	}
}

// TestJQEscapeRoutes: every way a jq filter could read a file the grant
// did not name, or learn the gateway's secrets.
func TestJQEscapeRoutes(t *testing.T) {
	t.Parallel()
	e := newConfineEnv(t)
	q := func(filter string) map[string]any { return map[string]any{"filter": filter, "file": "data/in.json"} }
	e.check(t, []route{
		{"plain query", "json-tools", "query", q(".a"), "", []string{"1"}},
		{"import relative to the working directory", "json-tools", "query", q(`import "../outside/secret" as $s; $s`), "DENIED: ", []string{`uses "import"`}},
		{"import with search metadata", "json-tools", "query", q(`import "secret" as $s {search: "` + e.dir + `/outside"}; $s`), "DENIED: ", []string{`uses "import"`}},
		{"include with search metadata", "json-tools", "query", q(`include "lib" {search: "` + e.dir + `/outside"}; evil`), "DENIED: ", []string{`uses "include"`}},
		{"import without spaces", "json-tools", "query", q(`import"../outside/secret"as$s;$s`), "DENIED: ", nil},
		{"import inside an interpolation", "json-tools", "query", q(`"\(import "x" as $s; $s)"`), "DENIED: ", nil},
		{"modulemeta loads a module by name", "json-tools", "query", q(`"../outside/lib" | modulemeta`), "DENIED: ", []string{`uses "modulemeta"`}},
		{"~/.jq of the gateway's HOME is not loaded", "json-tools", "query", q(`leaked`), "FAILED: ", []string{"leaked/0 is not defined"}},
		{"input_filename names only the descriptor", "json-tools", "query", q(`input_filename`), "", []string{`"/dev/fd/3"`}},
		{"$__loc__ names nothing", "json-tools", "query", q(`$__loc__`), "", []string{`"<top-level>"`}},
		{"env is the clean environment", "json-tools", "query", q(`env | keys`), "", []string{`"HOME"`, `"LANG"`, `"PATH"`, `"TMPDIR"`}},
		{"$ENV holds no gateway variable", "json-tools", "query", q(`[$ENV.GATEWAY_TOKEN, $ENV.RIPGREP_CONFIG_PATH]`), "", []string{"null"}},
		{"getpath on env", "json-tools", "query", q(`env | getpath(["GATEWAY_TOKEN"])`), "", []string{"null"}},
		{"HOME is an empty directory", "json-tools", "query", q(`$ENV.HOME | test("toolgate-empty-")`), "", []string{"true"}},
		{"inputs reads only the named file", "json-tools", "query", q(`[inputs]`), "", []string{"[]"}},
		{"the search list is nowhere", "json-tools", "query", q(`get_search_list`), "", []string{"/dev/null/no-jq-library"}},
		{"-L via the filter", "json-tools", "query", q(`-L` + e.dir + `/outside`), "DENIED: ", []string{`starts with "-"`}},
		{"--rawfile via the file", "json-tools", "query", map[string]any{"filter": ".", "file": "--rawfile"}, "DENIED: ", nil},
		{"--slurpfile via the file", "json-tools", "query", map[string]any{"filter": "$s", "file": "--slurpfile=s"}, "DENIED: ", nil},
		{"-f via the filter", "json-tools", "query", q(`-f` + e.dir + `/outside/lib.jq`), "DENIED: ", nil},
		{"--args via the filter", "json-tools", "query", q(`--args`), "DENIED: ", nil},
		{"file outside the root", "json-tools", "query", map[string]any{"filter": ".", "file": "outside/secret.json"}, "DENIED: ", []string{"is not within data"}},
		{"file via ..", "json-tools", "query", map[string]any{"filter": ".", "file": "data/../outside/secret.json"}, "DENIED: ", nil},
		{"keys of a directory", "json-tools", "keys", map[string]any{"file": "data/sub"}, "FAILED: ", nil},
	})
	// Beneath the check: even a filter that got past it would find nothing
	// through the library path, HOME or the working directory jq runs in.
	pack := e.ws.CommandPacks[0]
	argv, err := packs.BuildArgv(commandNamed(t, pack, "query"), map[string]any{"filter": `import "secret" as $s; $s`, "file": "/dev/null"})
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = empty, []string{"HOME=" + empty, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "module not found") {
		t.Errorf("an unchecked import under the pack's argv: %v\n%s", err, out)
	}
}

// TestRipgrepEscapeRoutes: pattern, glob and paths of the ripgrep pack
// never become options, the gateway's rg config never applies, and paths
// bound by path_within stay beneath their root.
func TestRipgrepEscapeRoutes(t *testing.T) {
	t.Parallel()
	e := newConfineEnv(t)
	s := func(extra map[string]any) map[string]any {
		args := map[string]any{"pattern": "needle", "paths": []any{"data"}}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	e.check(t, []route{
		{"search inside", "ripgrep", "search", s(nil), "", []string{"needle inside"}},
		{"RIPGREP_CONFIG_PATH (a --pre config) is not read", "ripgrep", "search", s(nil), "", nil},
		{"--pre via the pattern", "ripgrep", "search", s(map[string]any{"pattern": "--pre=touch"}), "FAILED: ", []string{"exit status 1"}},
		{"-f (patterns from a file) via the pattern", "ripgrep", "search", s(map[string]any{"pattern": "-f" + e.dir + "/outside/notes.txt"}), "FAILED: ", nil},
		{"--pre via the glob", "ripgrep", "search", s(map[string]any{"glob": "--pre=touch"}), "FAILED: ", nil},
		{"--pre via a path", "ripgrep", "search", s(map[string]any{"paths": []any{"--pre=touch"}}), "DENIED: ", []string{"is not within data"}},
		{"a path outside the root", "ripgrep", "search", s(map[string]any{"paths": []any{"outside"}}), "DENIED: ", []string{"is not within data"}},
		{"an absolute path outside", "ripgrep", "search", s(map[string]any{"paths": []any{e.dir + "/outside/notes.txt"}}), "DENIED: ", nil},
		{"one good path, one outside", "ripgrep", "search", s(map[string]any{"paths": []any{"data", "data/../outside"}}), "DENIED: ", []string{"(item 1)"}},
		{"paths omitted searches nothing unbound", "ripgrep", "search", map[string]any{"pattern": "needle"}, "DENIED: ", []string{`"paths" is bound`}},
		{"files lists the bound directory only", "ripgrep", "files", map[string]any{"paths": []any{"data"}}, "", []string{"/dev/fd/3/in.json"}},
	})
	// Had rg read the config, --pre=touch would have replaced every file's
	// content by touch's empty output: "search inside" found the needle.
}

// TestGitEscapeRoutes: git's inputs stay inside the repository: no
// option through a revision or path, no implicit `diff --no-index` of two
// files elsewhere, pathspec magic confined to the work tree.
func TestGitEscapeRoutes(t *testing.T) {
	t.Parallel()
	e := newConfineEnv(t)
	secret := e.dir + "/outside/secret.json"
	e.check(t, []route{
		{"diff inside", "git", "diff", map[string]any{}, "", nil},
		{"diff of an outside path and a file (implicit --no-index)", "git", "diff", map[string]any{"paths": []any{secret, "README.md"}}, "DENIED: ", []string{"does not match pattern"}},
		{"diff of two paths through ..", "git", "diff", map[string]any{"paths": []any{"../outside/secret.json", "README.md"}}, "DENIED: ", nil},
		{"diff with a path-like revision (implicit --no-index against a file named --)", "git", "diff", map[string]any{"from": secret}, "DENIED: ", nil},
		{"revision through ../", "git", "diff", map[string]any{"from": "../outside/secret.json"}, "DENIED: ", nil},
		{"--output via a revision", "git", "diff", map[string]any{"from": "--output=" + e.dir + "/pwned"}, "DENIED: ", nil},
		{"-c via a revision", "git", "log", map[string]any{"rev": "-c"}, "DENIED: ", nil},
		{"blame of an outside file", "git", "blame", map[string]any{"file": secret}, "DENIED: ", nil},
		{"show REV:PATH reads the object store only", "git", "show", map[string]any{"rev": "HEAD:../outside/secret.json"}, "FAILED: ", nil},
		{"pathspec magic :(top) stays in the tree", "git", "log", map[string]any{"paths": []any{":(top)README.md"}}, "", []string{"init"}},
		{"pathspec magic with .. is refused by git", "git", "log", map[string]any{"paths": []any{":(literal)x/../../outside"}}, "DENIED: ", nil},
		{"pathspec :(attr) reads only the tree's attributes", "git", "log", map[string]any{"paths": []any{":(attr:diff)"}}, "", nil},
	})
	if _, err := os.Stat(e.dir + "/pwned"); err == nil {
		t.Errorf("--output wrote a file")
	}
}
