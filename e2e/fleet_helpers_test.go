package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/state/pgtest"
)

// The fleet tests share one throwaway PostgreSQL cluster per test binary
// (each test gets a database of its own); the outage test, which stops
// its server, starts its own. closeFleetPG runs after every test.
var fleetPG struct {
	once sync.Once
	c    *pgtest.Cluster
	err  error
}

// fleetDSN returns a fresh database on the shared cluster; a missing
// PostgreSQL skips the test, and fails it under CI=true.
func fleetDSN(t testing.TB) string {
	t.Helper()
	fleetPG.once.Do(func() { fleetPG.c, fleetPG.err = pgtest.Start() })
	pgtest.Check(t, fleetPG.err)
	return fleetPG.c.NewDatabase(t)
}

func closeFleetPG() {
	if fleetPG.c != nil {
		fleetPG.c.Close()
	}
}

// sidefxBinary is testdata/sidefx, built once for the fleet tests.
func sidefxBinary(t testing.TB) string {
	t.Helper()
	return sidefxBuild.binary(t, "sidefx", "./testdata/sidefx")
}

// fleetWorkspace is one deployment's workspace: echo:say and echo:shout
// (open reads),
// side:append (an open write appending its argument to SIDE, the side
// effect the crash tests count; with DSNARG it records the chain's head
// too) and vault:stash (a strict write appending to SIDE too). STATE is
// the gateway.state block.
const fleetWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: always}
  admin_token: {env: TG_ADMIN_TOKEN}
  approvals: {wait: WAIT, ttl: 10m}
STATE
command_packs:
  - id: echo
    permission: open
    commands:
      - id: say
        argv: [ARGVECHO, "{n}"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: read
      - id: shout
        argv: [ARGVECHO, "{n}!"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: read
  - id: side
    permission: open
    commands:
      - id: append
        argv: [SIDEFX, SIDE, "{n}"DSNARG]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: write
  - id: vault
    permission: strict
    commands:
      - id: stash
        argv: [SIDEFX, SIDE, "{item}"]
        inputs: {type: object, properties: {item: {type: string}}, required: [item]}
        effects: write
agents:
  - {id: a1, token: {env: A1_TOKEN}, grants: [pack:echo, tool:side:append, tool:vault:stash]}
  - {id: a2, token: {env: A2_TOKEN}, grants: [pack:echo, tool:side:append, tool:vault:stash]}
  - {id: a3, token: {env: A3_TOKEN}, grants: [pack:echo, tool:side:append, tool:vault:stash]}
  - {id: a4, token: {env: A4_TOKEN}, grants: [pack:echo, tool:side:append, tool:vault:stash]}
`

// fleet is one deployment on disk: its workspace, the side-effect file and
// the environment every process of it gets.
type fleet struct {
	dir, ws, side string
	env           []string
}

// fleetOptions shape a fleet's workspace.
type fleetOptions struct {
	// dsn is the PostgreSQL database; "" is the embedded store.
	dsn string
	// headSeq makes side:append record the chain's highest seq beside its
	// argument (PostgreSQL only).
	headSeq bool
	// wait is approvals.wait (default 30s).
	wait string
}

// newFleet writes the workspace.
func newFleet(t testing.TB, o fleetOptions) *fleet {
	t.Helper()
	dsn := o.dsn
	if o.wait == "" {
		o.wait = "30s"
	}
	dir := t.TempDir()
	f := &fleet{dir: dir, side: filepath.Join(dir, "side.log"),
		env: []string{"TG_ADMIN_TOKEN=" + adminToken, "A1_TOKEN=tok-a1-0123456789abcdef", "A2_TOKEN=tok-a2-0123456789abcdef", "A3_TOKEN=tok-a3-0123456789abcdef", "A4_TOKEN=tok-a4-0123456789abcdef"}}
	stateBlock := ""
	if dsn != "" {
		stateBlock = "  state: {postgres: {dsn: {env: FLEET_DSN}}}"
		f.env = append(f.env, "FLEET_DSN="+dsn)
	}
	dsnArg := ""
	if o.headSeq {
		dsnArg = ", \"" + dsn + "\""
	}
	y := strings.NewReplacer("STATE\n", stateBlock+"\n", "DSNARG", dsnArg, "WAIT", o.wait).Replace(fleetWorkspace)
	y = strings.NewReplacer("ARGVECHO", argvEcho, "SIDEFX", sidefxBinary(t), "SIDE", f.side).Replace(y)
	f.ws = writeFile(t, dir, "toolgate.yaml", y)
	return f
}

// daemon starts `toolgate serve -w` for the fleet with extra args.
func (f *fleet) daemon(t testing.TB, args ...string) *daemon {
	t.Helper()
	return startDaemon(t, f.env, append([]string{"-w", f.ws}, args...)...)
}

// cli runs the built binary with the fleet's environment.
func (f *fleet) cli(t *testing.T, args ...string) result {
	t.Helper()
	return toolgate(t, f.dir, f.env, args...)
}

// adminJSON calls a daemon's admin API with the admin token and decodes
// the JSON answer into out (when not nil); it returns the HTTP status.
func adminJSON(t testing.TB, d *daemon, method, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, d.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, body)
		}
	}
	return resp.StatusCode
}

// pendingOn polls d's admin API until a request of agent is pending.
func pendingOn(t testing.TB, d *daemon, agent string) pendingEntry {
	t.Helper()
	var found pendingEntry
	waitFor(t, 30*time.Second, "a pending approval of "+agent+" listed by "+d.base, func() bool {
		var list []pendingEntry
		if adminJSON(t, d, "GET", "/admin/approvals", &list) != http.StatusOK {
			return false
		}
		for _, p := range list {
			if p.Agent == agent {
				found = p
				return true
			}
		}
		return false
	})
	return found
}

// sideLines reads the side-effect file (absent: none).
func sideLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ln := range strings.Split(string(b), "\n") {
		if ln != "" {
			out = append(out, ln)
		}
	}
	return out
}

// chainEvents exports the workspace's chain (`toolgate audit export -w`)
// and decodes it.
func (f *fleet) chainEvents(t *testing.T) []audit.Event {
	t.Helper()
	r := f.cli(t, "audit", "export", "-w", f.ws)
	if r.code != 0 {
		t.Fatalf("audit export: exit %d: %s", r.code, r.stderr)
	}
	var out []audit.Event
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("exported line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

// verifyChain runs `toolgate audit verify -w` and returns the event count.
func (f *fleet) verifyChain(t *testing.T) int {
	t.Helper()
	r := f.cli(t, "audit", "verify", "-w", f.ws)
	var n int
	if r.code != 0 {
		t.Fatalf("audit verify -w: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := fmt.Sscanf(r.stdout, "ok: %d events, chain intact", &n); err != nil {
		t.Fatalf("audit verify -w: %q", r.stdout)
	}
	return n
}

// allowDecisions maps the argument (sidefx's, argv[2]) of each allowed
// call of action to its decision event's seq.
func allowDecisions(evs []audit.Event, action string) map[string]int64 {
	out := map[string]int64{}
	for _, ev := range evs {
		if ev.Action == action && ev.Decision == "allow" && ev.Of == nil && len(ev.Argv) > 2 {
			out[ev.Argv[2]] = ev.Seq
		}
	}
	return out
}

var approvalIDPattern = regexp.MustCompile(`ap-[0-9a-f]+`)

// logged is a process whose stderr (JSON log lines) is kept for the test.
type logged struct {
	mu    sync.Mutex
	lines []string
}

func (l *logged) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

// find returns the first log line whose msg is msg.
func (l *logged) find(msg string) (map[string]any, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		var rec map[string]any
		if json.Unmarshal([]byte(s), &rec) == nil && rec["msg"] == msg {
			return rec, true
		}
	}
	return nil, false
}

// startLoggedDaemon is startDaemon keeping the daemon's log lines.
func startLoggedDaemon(t testing.TB, env []string, args ...string) (*daemon, *logged) {
	t.Helper()
	full := append([]string{"--log-format", "json", "serve", "--listen", "127.0.0.1:0"}, args...)
	cmd := exec.Command(binary, full...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	l := &logged{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			l.add(sc.Text())
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
				addr <- rec.Addr
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("toolgate serve exited before listening:\n%s", strings.Join(l.lines, "\n"))
		}
		return &daemon{base: "http://" + a, cmd: cmd}, l
	case <-time.After(60 * time.Second):
		t.Fatal("toolgate serve did not listen within a minute")
	}
	return nil, nil
}
