package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The two path_within rules, against the built binary: a bound
// placeholder is a whole argv element or stands last after literal text
// (the command gets /dev/fd/N, and "{dir}/{name}" would become
// /dev/fd/3/../outside/x), and a missing file a command writes is created
// by the gateway beneath the root — checked before the call is held, so
// nobody approves a call that cannot run.

// pathsMarker is the content of the file outside the root; no result and
// no audit line may ever hold it.
const pathsMarker = "OUTSIDE-MARKER-5d1e0c"

const pathsWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  admin_token: {env: TG_ADMIN_TOKEN}
  approvals: {wait: 100ms, ttl: 10m}
command_packs:
  - id: files
    permission: cautious
    commands:
      - id: cat
        argv: [cat, "--", "{path}"]
        inputs: {type: object, properties: {path: {type: string}}, required: [path], additionalProperties: false}
        effects: read
      - id: sort
        description: Sort a file into another.
        argv: [sort, -o, "{out}", "{in}"]
        inputs: {type: object, properties: {in: {type: string}, out: {type: string}}, required: [in, out], additionalProperties: false}
        effects: write
        creates: [out]
#PEEK
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants:
      - op: tool:files:cat
        param_constraints: {path: {path_within: data}}
      - op: tool:files:sort
        param_constraints: {in: {path_within: data}, out: {path_within: data}}
#GRANT
`

var pathsEnv = []string{"TG_ADMIN_TOKEN=" + adminToken, "DEV_TOKEN=dev-token-0123456789abcdef"}

// pathsDir is a workspace directory with data/ (the root) and outside/
// beside it, holding the marker.
func pathsDir(t *testing.T, peek, grant string) string {
	t.Helper()
	requireBinaries(t, "cat", "sort")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "toolgate.yaml", strings.NewReplacer("#PEEK\n", peek, "#GRANT\n", grant).Replace(pathsWorkspace))
	writeFile(t, dir, "data/words.txt", "pear\napple\nfig\n")
	writeFile(t, dir, "outside/x", pathsMarker+"\n")
	return dir
}

// peekCommand declares files:peek with the given argv element list and a
// grant binding dir by path_within under op.
func peekCommand(argv, extra string) string {
	return `      - id: peek
        argv: ` + argv + `
        inputs: {type: object, properties: {dir: {type: string}, name: {type: string}}, required: [dir, name]}
` + extra
}

// at is the LINE:COL of the first occurrence of s in the file.
func at(t *testing.T, file, s string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), s)
	if i < 0 {
		t.Fatalf("%s has no %q", file, s)
	}
	line := 1 + strings.Count(string(b[:i]), "\n")
	col := 1 + i - (strings.LastIndexByte(string(b[:i]), '\n') + 1)
	return strconv.Itoa(line) + ":" + strconv.Itoa(col)
}

// TestPathWithinComposedRefusedAtLoad: every route to a composed bound
// placeholder found is a load error at the element's FILE:LINE:COL, in
// `toolgate check` and `toolgate serve` alike, naming the element, why, and
// how to fix it; serve opens no audit log for it.
func TestPathWithinComposedRefusedAtLoad(t *testing.T) {
	t.Parallel()
	grantDir := func(op string) string {
		return "      - op: " + op + "\n        param_constraints: {dir: {path_within: data}}\n"
	}
	routes := []struct {
		name, peek, grant string
		elem              string // the text the error points at
		want              string
	}{
		{"the issue's layout", peekCommand(`[cat, "--", "{dir}/{name}"]`, "        effects: read\n"), grantDir("tool:files:peek"),
			`"{dir}/{name}"`, `command files:peek: argv element 2 "{dir}/{name}": {dir} is bound by path_within`},
		{"the alias form of the grant", peekCommand(`[cat, "--", "{dir}/{name}"]`, "        effects: read\n"), grantDir("files-peek"),
			`"{dir}/{name}"`, `grant files-peek binds dir with path_within`},
		{"a literal walk after it", peekCommand(`[cat, "--", "{dir}/../outside/x"]`, "        effects: read\n"), grantDir("tool:files:peek"),
			`"{dir}/../outside/x"`, `the text after it ("/../outside/x")`},
		{"a placeholder before it", peekCommand(`[cat, "--", "{name}{dir}"]`, "        effects: read\n"), grantDir("tool:files:peek"),
			`"{name}{dir}"`, `the placeholder {name} before it`},
		{"a YAML alias of an unbound command's element", `      - id: free
        argv: [cat, "--", &composed "{dir}/{name}"]
        inputs: {type: object, properties: {dir: {type: string}, name: {type: string}}}
        effects: read
` + peekCommand(`[cat, "--", *composed]`, "        effects: read\n"), grantDir("tool:files:peek"),
			`*composed`, `command files:peek: argv element 2 "{dir}/{name}"`},
		{"output.write_to", peekCommand(`[cat]`, "        effects: write\n        output: {write_to: \"{dir}/{name}\"}\n"), grantDir("tool:files:peek"),
			`{write_to:`, `command files:peek: output.write_to "{dir}/{name}"`},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			dir := pathsDir(t, rt.peek, rt.grant)
			ws := filepath.Join(dir, "toolgate.yaml")
			wantLine := "toolgate.yaml:" + at(t, ws, rt.elem) + ": "
			r := toolgate(t, dir, pathsEnv, "check", "-w", "toolgate.yaml")
			if r.code != 1 || !strings.Contains(r.stderr, wantLine) || !strings.Contains(r.stderr, rt.want) ||
				!strings.Contains(r.stderr, "bind the whole path as one parameter") {
				t.Errorf("check: exit %d, want 1 with %q… %q and the fix\n%s", r.code, wantLine, rt.want, r.stderr)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "serve", "-w", "toolgate.yaml", "--listen", "127.0.0.1:0")
			cmd.Dir, cmd.Env = dir, append(os.Environ(), pathsEnv...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 || ctx.Err() != nil || !strings.Contains(string(out), wantLine) || !strings.Contains(string(out), rt.want) {
				t.Errorf("serve = %v (context %v), want exit 1 naming %s\n%s", err, ctx.Err(), wantLine, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "audit.jsonl")); err == nil {
				t.Errorf("serve opened its audit log for a workspace it refused")
			}
		})
	}
}

// TestPathWithinComposedReloadRefused: a running gateway refuses a reload
// that brings the composed layout, keeps the revision in force, and the
// file outside the root is never read — through the composed command, which
// is not served, or through the bound one.
func TestPathWithinComposedReloadRefused(t *testing.T) {
	t.Parallel()
	dir := pathsDir(t, "", "")
	ws := filepath.Join(dir, "toolgate.yaml")
	writeFile(t, dir, "data/in.txt", "inside\n")
	d, logs := startLoggedDaemon(t, pathsEnv, "-w", ws)
	cl := mcpHTTP(t, d.base+"/mcp/files", "dev-token-0123456789abcdef")
	if text, isErr, _, err := call(t, cl, "cat", map[string]any{"path": "data/in.txt"}); err != nil || isErr || text != "inside\n" {
		t.Fatalf("cat before the reload: %q %v %v", text, isErr, err)
	}
	b, err := os.ReadFile(ws)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "agents:\n", peekCommand(`[cat, "--", "{dir}/{name}"]`, "        effects: read\n")+"agents:\n", 1) +
		"      - op: tool:files:peek\n        param_constraints: {dir: {path_within: data}}\n"
	writeFile(t, dir, "toolgate.yaml.tmp", bad)
	if err := os.Rename(ws+".tmp", ws); err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	waitFor(t, 20*time.Second, "the reload to be refused", func() bool {
		var ok bool
		rec, ok = logs.find("workspace reload refused; the previous revision stays in force")
		return ok
	})
	if e, _ := rec["err"].(string); !strings.Contains(e, `command files:peek: argv element 2 "{dir}/{name}": {dir} is bound by path_within`) {
		t.Errorf("reload refusal: %v", rec)
	}
	if names := toolNames(t, cl); slices.Contains(names, "peek") {
		t.Errorf("the refused revision's command is served: %v", names)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"peek", map[string]any{"dir": "data", "name": "../outside/x"}},
		{"cat", map[string]any{"path": "data/../outside/x"}},
		{"cat", map[string]any{"path": "/dev/fd/3/../outside/x"}},
	} {
		text, isErr, _, err := call(t, cl, c.tool, c.args)
		if err != nil || !isErr || !strings.HasPrefix(text, "DENIED: ") || strings.Contains(text, pathsMarker) {
			t.Errorf("%s %v: %q %v %v", c.tool, c.args, text, isErr, err)
		}
	}
	auditHasNoMarker(t, dir)
}

// auditHasNoMarker fails if the audit log holds the outside file's text.
func auditHasNoMarker(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), pathsMarker) {
		t.Errorf("the audit log holds the outside file's content")
	}
}

// TestPathWithinCreates: `sort -o {out} {in}` with out bound by
// path_within and listed under creates: writes data/sorted.txt, which did
// not exist, once approved; a missing directory, "..", an absolute path, a
// symlinked parent pointing out and a dangling symlink are refused at once
// — never held for approval — and nothing is created outside the root.
func TestPathWithinCreates(t *testing.T) {
	t.Parallel()
	dir := pathsDir(t, "", "")
	for link, target := range map[string]string{"data/up": "../outside", "data/dangling": "missing.txt", "data/dangling-out": "../outside/planted.txt"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	outsideBefore := dirNames(t, filepath.Join(dir, "outside"))
	d := startDaemon(t, pathsEnv, "-w", filepath.Join(dir, "toolgate.yaml"))
	cl := mcpHTTP(t, d.base+"/mcp/files", "dev-token-0123456789abcdef")
	refused := []struct{ out, want string }{
		{"data/nodir/sorted.txt", `parameter "out": "data/nodir/sorted.txt" does not exist, and neither does its directory; create the directory first`},
		{"data/../outside/new.txt", "is not within"},
		{filepath.Join(dir, "outside", "new.txt"), "is not within"},
		{"data/up/new.txt", "is not within"},
		{"data/dangling", "is a symbolic link to a file that does not exist"},
		{"data/dangling-out", "is not within"},
	}
	for _, c := range refused {
		text, isErr, _, err := call(t, cl, "sort", map[string]any{"in": "data/words.txt", "out": c.out})
		if err != nil || !isErr || !strings.HasPrefix(text, "DENIED: ") || strings.Contains(text, "approval pending") || !strings.Contains(text, c.want) {
			t.Errorf("out %s: %q (isError %v, %v), want an immediate refusal saying %q", c.out, text, isErr, err, c.want)
		}
	}
	if r := approvalsCLI(t, d, "list", "--format", "json"); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("refused calls were held for approval: %s %s", r.stdout, r.stderr)
	}

	args := map[string]any{"in": "data/words.txt", "out": "data/sorted.txt"}
	text, _, _, _ := call(t, cl, "sort", args)
	const prefix = "DENIED: approval pending "
	if !strings.HasPrefix(text, prefix) {
		t.Fatalf("sort into a new file: %q, want it held for approval", text)
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(text, prefix), " ")
	if _, err := os.Lstat(filepath.Join(dir, "data", "sorted.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the file exists before the call was approved: %v", err)
	}
	if r := approvalsCLI(t, d, "approve", id); r.code != 0 {
		t.Fatalf("approve: %s", r.stderr)
	}
	if text, isErr, _, err := call(t, cl, "sort", args); err != nil || isErr {
		t.Fatalf("approved sort: %q %v %v", text, isErr, err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "data", "sorted.txt"))
	if err != nil || string(got) != "apple\nfig\npear\n" {
		t.Errorf("data/sorted.txt: %q %v", got, err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "data", "sorted.txt")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Errorf("data/sorted.txt: %v %v, want a regular file, mode 0644", fi, err)
	}
	if got := dirNames(t, filepath.Join(dir, "outside")); !slices.Equal(got, outsideBefore) {
		t.Errorf("files appeared outside the root: %q, was %q", got, outsideBefore)
	}
	if _, err := os.Lstat(filepath.Join(dir, "data", "missing.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created through the dangling link: %v", err)
	}
	ran := 0
	for _, ev := range auditEvents(t, filepath.Join(dir, "audit.jsonl")) {
		if ev.Exit != nil {
			ran++
		}
	}
	if ran != 1 {
		t.Errorf("%d commands ran, want the approved sort alone", ran)
	}
	auditHasNoMarker(t, dir)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
