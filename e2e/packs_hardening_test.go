package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// The attacks of issue 15 on command packs, against the built binary: a
// path_within file swapped for a symlink mid-call, interpreters reaching
// files the grant never named, credentials printed in disguise, memory
// without bound, and children that leave the process group.

const hardeningSecret = "tgs_e2eHardeningSecret0123456789"

const hardeningWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
credentials:
  sec: {env: E2E_SECRET}
command_packs:
  - use: bundled/json-tools
  - id: leaky
    description: jq handed a credential beside agent-written program text (toolgate check warns).
    env: {SEC: "{credential.sec}"}
    commands:
      - id: q
        argv: [jq, -n, -r, "{filter}"]
        program: [filter]
        inputs: {type: object, properties: {filter: {type: string, maxLength: 4096}}, required: [filter], additionalProperties: false}
        effects: read
  - id: tree
    timeout: 20s
    timeout_overrides: {hang: 1s}
    commands:
      - id: detach
        description: Leaves a child that called setsid and ignores SIGTERM, then returns.
        argv: [DETACHER, "{pidfile}", return]
        inputs: &pidfile {type: object, properties: {pidfile: {type: string, maxLength: 4096}}, required: [pidfile], additionalProperties: false}
        effects: read
      - id: hang
        description: Leaves such a child and never returns (its timeout is 1s).
        argv: [DETACHER, "{pidfile}", hang]
        inputs: *pidfile
        effects: read
      - id: start
        description: The same, as a background job.
        argv: [DETACHER, "{pidfile}", hang]
        inputs: *pidfile
        effects: read
        background: true
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants:
      - op: tool:json-tools:query
        param_constraints: {file: {path_within: data}}
      - op: tool:json-tools:keys
        param_constraints: {file: {path_within: data}}
      - pack:leaky
      - pack:tree
`

type hardeningEnv struct {
	dir string
	env []string
	d   *daemon
}

func startHardening(t *testing.T) *hardeningEnv {
	t.Helper()
	requireBinaries(t, "jq")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	detacher := filepath.Join(t.TempDir(), "detacher")
	if out, err := exec.Command("go", "build", "-o", detacher, "./testdata/detacher").CombinedOutput(); err != nil {
		t.Fatalf("build detacher: %v\n%s", err, out)
	}
	writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(hardeningWorkspace, "DETACHER", detacher))
	writeFile(t, dir, "data/in.json", `{"a": 1, "where": "inside"}`)
	writeFile(t, dir, "outside/secret.json", `{"where": "OUTSIDE"}`)
	env := []string{"DEV_TOKEN=dev-token-0123456789abcdef", "E2E_SECRET=" + hardeningSecret}
	return &hardeningEnv{dir: dir, env: env, d: startDaemon(t, env, "-w", filepath.Join(dir, "toolgate.yaml"))}
}

func (e *hardeningEnv) client(t *testing.T, surface string) *client.Client {
	return mcpHTTP(t, e.d.base+"/mcp/"+surface, "dev-token-0123456789abcdef")
}

// TestPacksPathWithinRace: data/race flips between a file and a symlink to
// a file outside data/ while calls run; the command gets the descriptor the
// gateway opened beneath data/, so no call reads the outside file. The
// static escapes (.., absolute, symlinked parent, FIFO, hard link) are
// refused outright.
func TestPacksPathWithinRace(t *testing.T) {
	t.Parallel()
	e := startHardening(t)
	data := filepath.Join(e.dir, "data")
	secret := filepath.Join(e.dir, "outside", "secret.json")
	race := filepath.Join(data, "race")
	writeFile(t, data, "race", `{"where": "inside"}`)
	if err := os.Symlink(secret, filepath.Join(data, "race.link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(data, "up")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(data, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(data, "hard.json")); err != nil {
		t.Fatal(err)
	}
	cl := e.client(t, "json-tools")
	runCases(t, cl, []callCase{
		{name: "inside", tool: "query", args: map[string]any{"filter": ".where", "file": "data/in.json"}, want: []string{`"inside"`}},
		{name: "..", tool: "query", args: map[string]any{"filter": ".", "file": "data/../outside/secret.json"}, wantErr: true, want: []string{"DENIED: "}, not: []string{"OUTSIDE"}},
		{name: "absolute", tool: "query", args: map[string]any{"filter": ".", "file": secret}, wantErr: true, want: []string{"DENIED: "}, not: []string{"OUTSIDE"}},
		{name: "symlinked parent", tool: "query", args: map[string]any{"filter": ".", "file": "data/up/secret.json"}, wantErr: true, want: []string{"DENIED: "}, not: []string{"OUTSIDE"}},
		{name: "symlink to outside", tool: "query", args: map[string]any{"filter": ".", "file": "data/race.link"}, wantErr: true, want: []string{"DENIED: "}, not: []string{"OUTSIDE"}},
		{name: "FIFO", tool: "keys", args: map[string]any{"file": "data/fifo"}, wantErr: true, want: []string{"a FIFO"}},
		{name: "hard link", tool: "keys", args: map[string]any{"file": "data/hard.json"}, wantErr: true, want: []string{"hard link"}, not: []string{"OUTSIDE"}},
		{name: "input_filename", tool: "query", args: map[string]any{"filter": "input_filename", "file": "data/in.json"}, want: []string{`"/dev/fd/3"`}},
	})

	// The race: a flipper swaps data/race for the symlink and back as fast
	// as it can while three clients call.
	stop := make(chan struct{})
	var flips atomic.Int64
	var flipper sync.WaitGroup
	flipper.Add(1)
	go func() {
		defer flipper.Done()
		parked, link := race+".parked", filepath.Join(data, "race.link")
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Rename(race, parked)
			_ = os.Rename(link, race)
			_ = os.Rename(race, link)
			_ = os.Rename(parked, race)
			flips.Add(1)
		}
	}()
	const workers, perWorker = 3, 100
	var inside, refused, outside, other atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := e.client(t, "json-tools")
			for range perWorker {
				text, _, _, err := call(t, c, "query", map[string]any{"filter": ".where", "file": "data/race"})
				switch {
				case err != nil:
					other.Add(1)
				case strings.Contains(text, "OUTSIDE"):
					outside.Add(1)
				case strings.Contains(text, `"inside"`):
					inside.Add(1)
				case strings.Contains(text, "DENIED: ") || strings.Contains(text, "could not run"):
					refused.Add(1)
				default:
					other.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	flipper.Wait()
	t.Logf("path_within race: %d calls in %s during %d flips: %d read the inside file, %d refused mid-swap, %d other, %d read the outside file",
		workers*perWorker, time.Since(start).Round(time.Millisecond), flips.Load(), inside.Load(), refused.Load(), other.Load(), outside.Load())
	if outside.Load() != 0 {
		t.Fatalf("%d calls read the file outside data/", outside.Load())
	}
	if inside.Load() == 0 || flips.Load() < 10 {
		t.Fatalf("the race did not happen (inside %d, flips %d): the test proves nothing", inside.Load(), flips.Load())
	}
	if other.Load() != 0 {
		t.Errorf("%d calls ended some other way", other.Load())
	}
}

// TestPacksJQConfined: the filter that read JSON files outside data/ in
// the issue is refused, with its variants; jq sees only the clean env.
func TestPacksJQConfined(t *testing.T) {
	t.Parallel()
	e := startHardening(t)
	cl := e.client(t, "json-tools")
	q := func(filter string) map[string]any { return map[string]any{"filter": filter, "file": "data/in.json"} }
	runCases(t, cl, []callCase{
		{name: "import", tool: "query", args: q(`import "../outside/secret" as $s; $s`), wantErr: true, want: []string{`DENIED: `, `uses "import"`}, not: []string{"OUTSIDE"}},
		{name: "import with search", tool: "query", args: q(`import "secret" as $s {search: "` + e.dir + `/outside"}; $s`), wantErr: true, want: []string{`DENIED: `}, not: []string{"OUTSIDE"}},
		{name: "include", tool: "query", args: q(`include "x" {search: "/"}; .`), wantErr: true, want: []string{`DENIED: `}},
		{name: "modulemeta", tool: "query", args: q(`"x" | modulemeta`), wantErr: true, want: []string{`DENIED: `}},
		{name: "-L via the filter", tool: "query", args: q(`-L/`), wantErr: true, want: []string{`DENIED: `}},
		{name: "env is the clean environment", tool: "query", args: q(`env | del(.HOME, .LANG, .PATH, .TMPDIR) | keys`), want: []string{`[]`}},
		{name: "HOME is an empty directory", tool: "query", args: q(`$ENV.HOME | test("toolgate-empty-")`), want: []string{`true`}},
		{name: "a key named import", tool: "query", args: q(`{import: .a}`), want: []string{`"import": 1`}},
	})
}

// TestPacksRedactionEncodings: a program holding a credential prints it
// disguised; neither the result nor the audit holds it. toolgate check
// warns about the pack that makes this possible.
func TestPacksRedactionEncodings(t *testing.T) {
	t.Parallel()
	e := startHardening(t)
	cl := e.client(t, "leaky")
	filters := []string{
		`env.SEC`, `env.SEC | @base64`, `"pad" + env.SEC | @base64`, `env.SEC | @base64 | rtrimstr("=")`,
		`env.SEC | explode`, `env.SEC | explode | map(tostring) | join(",")`, `env.SEC | explode | reverse | implode`,
		`env.SEC | ascii_upcase`, `env.SEC | ascii_downcase`, `env.SEC[0:14]`, `env.SEC[10:]`, `env.SEC | @uri`,
		`env.SEC | tojson | tojson`, `{(env.SEC): 1}`,
	}
	caught := 0
	for _, f := range filters {
		text, isErr, _, err := call(t, cl, "q", map[string]any{"filter": f})
		if err != nil || isErr {
			t.Errorf("%s: %v %s", f, err, text)
			continue
		}
		if strings.Contains(strings.ToLower(text), "0123456789") {
			t.Errorf("%s leaked: %s", f, text)
			continue
		}
		if strings.Contains(text, "[REDACTED:sec]") {
			caught++
		}
	}
	t.Logf("redaction: %d of %d disguised forms of the credential caught, 0 leaked", caught, len(filters))
	if caught != len(filters) {
		t.Errorf("only %d of %d caught", caught, len(filters))
	}
	audit, err := os.ReadFile(filepath.Join(e.dir, "audit.jsonl"))
	if err != nil || strings.Contains(strings.ToLower(string(audit)), "0123456789") {
		t.Errorf("the audit holds the credential (or is unreadable: %v)", err)
	}
	r := toolgate(t, e.dir, e.env, "check", "-w", "toolgate.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "toolgate.yaml:") || !strings.Contains(r.stderr, "warning: command leaky:q takes agent-written program text") || !strings.Contains(r.stderr, "move the credential") {
		t.Errorf("check: exit %d\n%s", r.code, r.stderr)
	}
}

// TestPacksMaxMemory: jq on a large input (the issue saw it reach 564 MB)
// stops at the json-tools pack's max_memory; ordinary files still work.
func TestPacksMaxMemory(t *testing.T) {
	t.Parallel()
	e := startHardening(t)
	f, err := os.Create(filepath.Join(e.dir, "data", "big.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"items":[`)
	row := `{"id":1,"name":"a generated record of a large input","tags":["x","y","z"],"n":12345.678},`
	for range 1_100_000 {
		f.WriteString(row)
	}
	f.WriteString(`{}]}`)
	size, _ := f.Seek(0, 1)
	f.Close()
	cl := e.client(t, "json-tools")
	start := time.Now()
	text, isErr, _, err := call(t, cl, "keys", map[string]any{"file": "data/big.json"})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("max_memory: jq keys on a %d MB file stopped after %s: %s", size>>20, took.Round(time.Millisecond), firstLine(text))
	if !isErr || !strings.Contains(text, "max_memory (536870912 bytes") {
		t.Errorf("a %d MB input was not bounded:\n%s", size>>20, text)
	}
	runCases(t, cl, []callCase{{name: "small file", tool: "keys", args: map[string]any{"file": "data/in.json"}, want: []string{`["a","where"]`}}})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestPacksProcessTree: a child that calls setsid and ignores SIGTERM is
// stopped when its call ends, when the call times out, when the gateway
// stops during a background job, and when the gateway is killed.
func TestPacksProcessTree(t *testing.T) {
	t.Parallel()
	e := startHardening(t)
	cl := e.client(t, "tree")
	gone := func(what string, pid int, since time.Time) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for pidExists(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("%s: detached process %d still runs; processes left: 1", what, pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("process tree, %s: detached child gone %s after the trigger; processes left: 0", what, time.Since(since).Round(time.Millisecond))
	}
	pidFile := func() string { return filepath.Join(t.TempDir(), "pid") }

	p := pidFile()
	start := time.Now()
	if text, isErr, _, err := call(t, cl, "detach", map[string]any{"pidfile": p}); err != nil || isErr {
		t.Fatalf("detach: %v %s", err, text)
	}
	gone("call ended", readPIDFile(t, p), start)

	p = pidFile()
	start = time.Now()
	text, isErr, _, err := call(t, cl, "hang", map[string]any{"pidfile": p})
	if err != nil || !isErr || !strings.Contains(text, "timed out after 1s") {
		t.Fatalf("hang: %v %v %s", err, isErr, text)
	}
	gone("call timed out (1s)", readPIDFile(t, p), start)

	// The gateway stops (SIGTERM) while a background job runs.
	p = pidFile()
	if text, isErr, _, err := call(t, cl, "start", map[string]any{"pidfile": p}); err != nil || isErr {
		t.Fatalf("start: %v %s", err, text)
	}
	pid := readPIDFile(t, p)
	start = time.Now()
	if err := e.d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	gone("gateway stopped (SIGTERM)", pid, start)

	// A gateway killed outright cannot stop anything itself: the
	// supervisor sees its control pipe close.
	k := startDaemon(t, e.env, "-w", filepath.Join(e.dir, "toolgate.yaml"))
	kc := mcpHTTP(t, k.base+"/mcp/tree", "dev-token-0123456789abcdef")
	p = pidFile()
	if text, isErr, _, err := call(t, kc, "start", map[string]any{"pidfile": p}); err != nil || isErr {
		t.Fatalf("start: %v %s", err, text)
	}
	pid = readPIDFile(t, p)
	start = time.Now()
	if err := k.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	gone("gateway killed (SIGKILL)", pid, start)
}

// pidExists is true while pid exists at all (the supervisor reaps what it
// kills, so a stopped tree leaves no zombie either).
func pidExists(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
