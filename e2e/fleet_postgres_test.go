package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolgate/toolgate/state/pgtest"
)

// TestFleetPostgresReplicas: two daemons and a stdio instance share one
// PostgreSQL database. A call held on replica A is listed and approved
// through replica B's admin API, wakes on A and runs once; a call held by
// the stdio instance is approved with `toolgate approvals -w`; identical
// calls waiting on both replicas share one approval, and it runs once.
func TestFleetPostgresReplicas(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{dsn: fleetDSN(t)})
	a, b := f.daemon(t), f.daemon(t)
	stdio := mcpStdio(t, f.env, "serve", "-w", f.ws, "--agent", "a3", "--stdio", "--surface", "vault")

	onA := mcpHTTP(t, a.base+"/mcp/vault", "tok-a1-0123456789abcdef")
	held := callAsync(t, onA, "stash", map[string]any{"item": "held-on-a"}, nil)
	p := pendingOn(t, b, "a1")
	var decided pendingEntry
	start := time.Now()
	if code := adminJSON(t, b, "POST", "/admin/approvals/"+p.ID+"/approve", &decided); code != http.StatusOK {
		t.Fatalf("approve through B: %d", code)
	}
	if r := receive(t, held); r.isErr {
		t.Fatalf("the call held on A after B approved it: %q", r.text)
	}
	t.Logf("approved on B, ran on A %s later", time.Since(start).Round(time.Millisecond))

	heldStdio := callAsync(t, stdio, "stash", map[string]any{"item": "held-by-stdio"}, nil)
	ps := pendingOn(t, a, "a3")
	if r := f.cli(t, "approvals", "-w", f.ws, "approve", ps.ID); r.code != 0 {
		t.Fatalf("approvals -w approve: exit %d: %s", r.code, r.stderr)
	}
	if r := receive(t, heldStdio); r.isErr {
		t.Fatalf("the stdio instance's call after the CLI approved it: %q", r.text)
	}

	// The same call of one agent waiting on both replicas: one request,
	// one approval, one run; the other opens a new request, denied here.
	twinA := callAsync(t, mcpHTTP(t, a.base+"/mcp/vault", "tok-a2-0123456789abcdef"), "stash", map[string]any{"item": "twin"}, nil)
	first := pendingOn(t, b, "a2")
	twinB := callAsync(t, mcpHTTP(t, b.base+"/mcp/vault", "tok-a2-0123456789abcdef"), "stash", map[string]any{"item": "twin"}, nil)
	// Whether B's call joined the request before the approval or comes
	// after it, the approval is used once: the other call opens a new one.
	if code := adminJSON(t, a, "POST", "/admin/approvals/"+first.ID+"/approve", nil); code != http.StatusOK {
		t.Fatalf("approve the twin: %d", code)
	}
	second := pendingOn(t, b, "a2")
	if second.ID == first.ID {
		t.Fatal("the used approval is still pending")
	}
	if code := adminJSON(t, b, "POST", "/admin/approvals/"+second.ID+"/deny", nil); code != http.StatusOK {
		t.Fatalf("deny the second twin: %d", code)
	}
	ra, rb := receive(t, twinA), receive(t, twinB)
	if ra.isErr == rb.isErr || !strings.Contains(ra.text+rb.text, "denied by operator") {
		t.Fatalf("twin calls: A %q, B %q; want one run and one denied", ra.text, rb.text)
	}

	got := sideLines(t, f.side)
	slices.Sort(got)
	if strings.Join(got, ",") != "held-by-stdio,held-on-a,twin" {
		t.Fatalf("side effects %v, want each approved call exactly once", got)
	}
	f.verifyChain(t)
}

// TestFleetPostgresOneChain: four processes — two daemons, a per-agent
// HTTP instance and a stdio instance — make 500 calls each against one
// database: 4,000 events, one chain that `toolgate audit verify -w`
// accepts, none lost, none duplicated.
func TestFleetPostgresOneChain(t *testing.T) {
	t.Parallel()
	const perProcess = 500
	f := newFleet(t, fleetOptions{dsn: fleetDSN(t)})
	a, b := f.daemon(t), f.daemon(t)
	inst := f.daemon(t, "--agent", "a3")
	clients := map[string]*client.Client{
		"a1": mcpHTTP(t, a.base+"/mcp/echo", "tok-a1-0123456789abcdef"),
		"a2": mcpHTTP(t, b.base+"/mcp/echo", "tok-a2-0123456789abcdef"),
		"a3": mcpHTTP(t, inst.base+"/mcp/echo", "tok-a3-0123456789abcdef"),
		"a4": mcpStdio(t, f.env, "serve", "-w", f.ws, "--agent", "a4", "--stdio", "--surface", "echo"),
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for agent, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProcess {
				n := fmt.Sprintf("%s-%d", agent, i)
				text, isErr, _, err := call(t, cl, "say", map[string]any{"n": n})
				if err != nil || isErr || strings.TrimSpace(text) != `["`+n+`"]` {
					errs <- fmt.Errorf("%s call %d: %q isError %v err %v", agent, i, text, isErr, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d calls through 4 processes on one database in %s", 4*perProcess, time.Since(start).Round(time.Millisecond))
	if n := f.verifyChain(t); n != 2*4*perProcess {
		t.Fatalf("the chain holds %d events, want %d (a decision and an outcome per call)", n, 2*4*perProcess)
	}
	per := map[string]int{}
	for i, ev := range f.chainEvents(t) {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i+1, ev.Seq)
		}
		per[ev.Agent]++
	}
	for agent := range clients {
		if per[agent] != 2*perProcess {
			t.Errorf("%s: %d events, want %d", agent, per[agent], 2*perProcess)
		}
	}
}

// burst calls side:append on cl with ids prefix-0, prefix-1, … until stop
// closes or a call fails; it returns the ids that succeeded.
func burst(t *testing.T, cl *client.Client, prefix string, stop <-chan struct{}, done *atomic.Int64) []string {
	var ok []string
	for i := 0; ; i++ {
		select {
		case <-stop:
			return ok
		default:
		}
		n := prefix + "-" + strconv.Itoa(i)
		text, isErr, _, err := call(t, cl, "append", map[string]any{"n": n})
		if err != nil || isErr {
			return ok
		}
		if strings.TrimSpace(text) == "ok" {
			ok = append(ok, n)
			done.Add(1)
		}
	}
}

// TestFleetPostgresKillMidBurst: replica A is killed with SIGKILL while
// both replicas run a burst of side-effecting calls. The chain still
// verifies, there are no more side effects than allow decisions, and each
// side effect saw its own decision already committed when it ran (the
// command records the chain's head before acting).
func TestFleetPostgresKillMidBurst(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{dsn: fleetDSN(t), headSeq: true})
	a, b := f.daemon(t), f.daemon(t)
	stop := make(chan struct{})
	var done atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	succeeded := map[string]bool{}
	for i, d := range []*daemon{a, a, a, b, b, b} {
		cl := mcpHTTP(t, d.base+"/mcp/side", fmt.Sprintf("tok-a%d-0123456789abcdef", i%4+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range burst(t, cl, fmt.Sprintf("c%d", i), stop, &done) {
				mu.Lock()
				succeeded[n] = true
				mu.Unlock()
			}
		}()
	}
	waitFor(t, 30*time.Second, "the burst to get going", func() bool { return done.Load() >= 30 })
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	mark := done.Load()
	waitFor(t, 30*time.Second, "replica B to carry on", func() bool { return done.Load() >= mark+30 })
	close(stop)
	wg.Wait()

	f.verifyChain(t)
	decisions := allowDecisions(f.chainEvents(t), "command:call:side:append")
	lines := sideLines(t, f.side)
	if len(lines) > len(decisions) {
		t.Fatalf("%d side effects but %d allow decisions", len(lines), len(decisions))
	}
	for _, ln := range lines {
		var n string
		var head int64
		if _, err := fmt.Sscanf(ln, "%s %d", &n, &head); err != nil {
			t.Fatalf("side effect line %q: %v", ln, err)
		}
		seq, ok := decisions[n]
		if !ok {
			t.Fatalf("side effect %s has no decision event in the chain", n)
		}
		if seq > head {
			t.Fatalf("side effect %s ran when the chain's head was %d, before its decision (seq %d) was committed", n, head, seq)
		}
	}
	for n := range succeeded {
		if _, ok := decisions[n]; !ok {
			t.Fatalf("call %s succeeded but its decision is not in the chain", n)
		}
	}
	t.Logf("%d side effects, %d allow decisions, %d calls answered ok", len(lines), len(decisions), len(succeeded))
}

// TestFleetPostgresOutage: PostgreSQL stops in the middle of a run. Calls
// are refused (fail closed) while it is down and /healthz says so; when it
// is back the same gateway serves again without a restart; every call
// answered ok is in the chain with its outcome, and no side effect lacks
// its decision.
func TestFleetPostgresOutage(t *testing.T) {
	t.Parallel()
	pg := pgtest.Need(t) // its own cluster: this test stops it
	f := newFleet(t, fleetOptions{dsn: pg.NewDatabase(t)})
	d := f.daemon(t)
	cl := mcpHTTP(t, d.base+"/mcp/side", "tok-a1-0123456789abcdef")
	type outcome struct {
		n      string
		ok     bool
		text   string
		rpcErr error
	}
	var mu sync.Mutex
	var outcomes []outcome
	count := func(ok bool) int {
		mu.Lock()
		defer mu.Unlock()
		c := 0
		for _, o := range outcomes {
			if o.ok == ok {
				c++
			}
		}
		return c
	}
	stop := make(chan struct{})
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n := "o-" + strconv.Itoa(i)
			text, isErr, _, err := call(t, cl, "append", map[string]any{"n": n})
			mu.Lock()
			outcomes = append(outcomes, outcome{n: n, ok: err == nil && !isErr && strings.TrimSpace(text) == "ok", text: text, rpcErr: err})
			mu.Unlock()
			if err == nil && isErr {
				time.Sleep(20 * time.Millisecond) // refused: do not spin while the database is down
			}
		}
	}()
	health := func() int {
		resp, err := http.Get(d.base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor(t, 30*time.Second, "calls to run", func() bool { return count(true) >= 20 })
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	okAtStop := count(true)
	waitFor(t, 30*time.Second, "calls to be refused", func() bool { return count(false) >= 5 })
	waitFor(t, 30*time.Second, "/healthz to report the outage", func() bool { return health() == http.StatusServiceUnavailable })
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "calls to run again", func() bool { return count(true) >= okAtStop+20 })
	waitFor(t, 30*time.Second, "/healthz to recover", func() bool { return health() == http.StatusOK })
	close(stop)
	<-loopDone

	f.verifyChain(t)
	evs := f.chainEvents(t)
	decisions := allowDecisions(evs, "command:call:side:append")
	completed := map[int64]bool{}
	for _, ev := range evs {
		if ev.Of != nil && ev.Decision == "completed" {
			completed[*ev.Of] = true
		}
	}
	refused := 0
	for _, o := range outcomes {
		if o.rpcErr != nil {
			t.Fatalf("call %s got no tool result: %v (a refusal must be an answer)", o.n, o.rpcErr)
		}
		if o.ok {
			if seq, ok := decisions[o.n]; !ok || !completed[seq] {
				t.Fatalf("call %s answered ok but the chain lacks its decision or outcome", o.n)
			}
			continue
		}
		refused++
		if !strings.HasPrefix(o.text, "DENIED: ") {
			t.Fatalf("call %s during the outage: %q, want a DENIED refusal", o.n, o.text)
		}
	}
	lines := sideLines(t, f.side)
	if len(lines) > len(decisions) {
		t.Fatalf("%d side effects but %d allow decisions", len(lines), len(decisions))
	}
	for _, n := range lines {
		if _, ok := decisions[n]; !ok {
			t.Fatalf("side effect %s has no decision event in the chain", n)
		}
	}
	t.Logf("%d calls: %d ran, %d refused during the outage; %d side effects", len(outcomes), len(outcomes)-refused, refused, len(lines))
}

// modernCall sends one 2026-07-28 request (stateless: the protocol
// version and the client's capabilities, with the tasks extension, in
// _meta) to url with token and returns the JSON-RPC message answered.
func modernCall(t *testing.T, url, token, method, name string, params map[string]any) map[string]any {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatalf("%s: %s: %v", method, resp.Status, err)
	}
	return msg
}

// TestFleetPostgresTasks: a held call of a 2026-07-28 client with the
// tasks extension becomes a task on replica A; replica B reads it (and
// another agent cannot), an operator approves through B, the call runs on
// A once, and B reports the task completed with its result.
func TestFleetPostgresTasks(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{dsn: fleetDSN(t)})
	a, b := f.daemon(t), f.daemon(t)
	created := modernCall(t, a.base+"/mcp/vault", "tok-a1-0123456789abcdef", "tools/call", "stash", map[string]any{"name": "stash", "arguments": map[string]any{"item": "as-a-task"}})
	res, _ := created["result"].(map[string]any)
	id, _ := res["taskId"].(string)
	if res["resultType"] != "task" || id == "" {
		t.Fatalf("held call on A: %v, want a task", created)
	}
	get := func(d *daemon, token string) map[string]any {
		return modernCall(t, d.base+"/mcp/vault", token, "tasks/get", id, map[string]any{"taskId": id})
	}
	if r, _ := get(b, "tok-a1-0123456789abcdef")["result"].(map[string]any); r["status"] != "working" {
		t.Fatalf("tasks/get on B: %v", r)
	}
	if e := get(b, "tok-a2-0123456789abcdef")["error"]; e == nil {
		t.Fatal("another agent read the task")
	}
	p := pendingOn(t, b, "a1")
	if code := adminJSON(t, b, "POST", "/admin/approvals/"+p.ID+"/approve", nil); code != http.StatusOK {
		t.Fatalf("approve through B: %d", code)
	}
	var done map[string]any
	waitFor(t, 30*time.Second, "the task to complete", func() bool {
		done, _ = get(b, "tok-a1-0123456789abcdef")["result"].(map[string]any)
		return done["status"] == "completed"
	})
	if r, _ := done["result"].(map[string]any); r == nil || r["isError"] == true {
		t.Fatalf("completed task: %v", done)
	}
	if got := sideLines(t, f.side); strings.Join(got, ",") != "as-a-task" {
		t.Fatalf("side effects %v, want the task's call once", got)
	}
	f.verifyChain(t)
}
