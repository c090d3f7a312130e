package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// TestSoak runs mixed hostile and normal traffic over several agents and
// both protocol eras against one daemon on loopback, sampling toolgate's
// resident memory and threads (/proc/<pid>/status, /proc/<pid>/task),
// goroutines (go_goroutines of its /metrics; nothing new is exposed) and
// open descriptors (/proc/<pid>/fd) over time. After warm-up they must stay flat; at the
// end every allowed call has its decision and outcome events and the
// chain verifies. About 90s by default; TOOLGATE_SOAK=5m (any Go
// duration) for longer, and 20s under -short.
func TestSoak(t *testing.T) {
	t.Parallel() // paced traffic: it mostly waits, so other tests run beside it
	length := 90 * time.Second
	if testing.Short() {
		length = 20 * time.Second
	}
	if v := os.Getenv("TOOLGATE_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 10*time.Second {
			t.Fatalf("TOOLGATE_SOAK=%q: give a Go duration of 10s or more", v)
		}
		length = d
	}
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("jq is not installed; run scripts/ci-deps/bundled.sh")
		}
		t.Skip("jq is not installed; run scripts/ci-deps/bundled.sh")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "data/in.json", `{"a": 1, "where": "inside"}`)
	conf := conformanceServer(t)
	httpURL := startConfHTTP(t)
	ws := writeFile(t, dir, "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: always}
  admin_token: {env: TG_ADMIN_TOKEN}
  max_body: 64KiB
  body_timeout: 2s
  sessions: {max_per_agent: 6, idle_ttl: 3s}
mcp_servers:
  - id: stdiosrv
    command: [%s, -stdio]
    permission: open
    timeout: 10s
  - id: httpsrv
    url: %s
    permission: open
    timeout: 10s
command_packs:
  - use: bundled/json-tools
agents:
  - id: alice
    token: {env: ALICE_TOKEN}
    grants: &normal
      - op: tool:json-tools:query
        param_constraints: {file: {path_within: data}}
      - tool:stdiosrv:echo
      - tool:httpsrv:echo
  - id: bob
    token: {env: BOB_TOKEN}
    grants: *normal
  - id: mallory
    token: {env: MALLORY_TOKEN}
    grants:
      - op: tool:json-tools:keys
        param_constraints: {file: {path_within: data}}
      - tool:stdiosrv:pid
`, conf, httpURL))
	tokens := map[string]string{"alice": "soak-alice-0123456789", "bob": "soak-bob-0123456789", "mallory": "soak-mallory-0123456789"}
	env := []string{"TG_ADMIN_TOKEN=" + adminToken, "ALICE_TOKEN=" + tokens["alice"], "BOB_TOKEN=" + tokens["bob"], "MALLORY_TOKEN=" + tokens["mallory"]}
	d := startDaemon(t, env, "-w", ws)
	pid := d.cmd.Process.Pid
	c := &soakClient{base: d.base, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 60 * time.Second}}

	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	st := newSoakStats()
	var wg sync.WaitGroup
	worker := func(pace time.Duration, step func(context.Context)) {
		wg.Go(func() {
			tick := time.NewTicker(pace)
			defer tick.Stop()
			for ctx.Err() == nil {
				step(ctx)
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
		})
	}

	// Normal traffic: pack reads and proxied calls, in both eras, by
	// alice and bob.
	for _, agent := range []string{"alice", "bob"} {
		tok := tokens[agent]
		for _, tgt := range []struct{ surface, tool, want string }{
			{"json-tools", "query", "1"},
			{"stdiosrv", "echo", "soak"},
			{"httpsrv", "echo", "soak"},
		} {
			args := map[string]any{"text": "soak"}
			if tgt.tool == "query" {
				args = map[string]any{"filter": ".a", "file": "data/in.json"}
			}
			action := "mcp:call:" + tgt.surface + ":" + tgt.tool
			if tgt.surface == "json-tools" {
				action = "command:call:json-tools:query"
			}
			label := agent + " " + action
			var sess *soakSession
			worker(100*time.Millisecond, func(ctx context.Context) {
				if sess == nil {
					var err error
					if sess, err = c.open(ctx, tgt.surface, tok); err != nil {
						if ctx.Err() == nil {
							st.fail("legacy open "+label, err.Error())
						}
						sess = nil
						return
					}
				}
				text, isErr, err := sess.call(ctx, tgt.tool, args)
				st.normal(label, "legacy", text, isErr, err, tgt.want)
				if err != nil {
					sess = nil // a new session next time
				}
			})
			worker(100*time.Millisecond, func(ctx context.Context) {
				text, isErr, err := c.modernCall(ctx, tgt.surface, tok, tgt.tool, args)
				st.normal(label, "modern", text, isErr, err, tgt.want)
			})
		}
	}

	// Hostile traffic.
	alice, mallory := tokens["alice"], tokens["mallory"]
	aliceSess, err := c.open(ctx, "json-tools", alice)
	if err != nil {
		t.Fatal(err)
	}
	mallorySess, err := c.open(ctx, "json-tools", mallory)
	if err != nil {
		t.Fatal(err)
	}
	hostile := func(name string, pace time.Duration, step func(context.Context) (ok bool, what string)) {
		worker(pace, func(ctx context.Context) {
			ok, what := step(ctx)
			st.hostile(name, ok, what)
		})
	}
	hostile("malformed JSON", 200*time.Millisecond, func(ctx context.Context) (bool, string) {
		r := c.post(ctx, "/mcp/json-tools", alice, "", "application/json", nil, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":`))
		return r.status == http.StatusBadRequest, r.String()
	})
	hostile("case-variant keys", 150*time.Millisecond, func(ctx context.Context) (bool, string) {
		for _, body := range []string{
			`{"name":"query","Name":"keys","arguments":{"filter":".","file":"data/in.json"}}`,
			`{"name":"query","arguments":{"filter":".","file":"data/in.json","File":"../toolgate.yaml"}}`,
			`{"name":"query","Arguments":{"filter":".","file":"../toolgate.yaml"},"arguments":{"filter":".a","file":"data/in.json"}}`,
		} {
			text, isErr, err := aliceSess.rawCall(ctx, body)
			if ctx.Err() != nil {
				return true, ""
			}
			if err == nil && (!isErr || !strings.Contains(text, "DENIED: ")) {
				return false, "ran: " + text
			}
		}
		return true, ""
	})
	hostile("ungranted tools", 150*time.Millisecond, func(ctx context.Context) (bool, string) {
		text, isErr, err := mallorySess.call(ctx, "query", map[string]any{"filter": ".", "file": "data/in.json"})
		if ctx.Err() != nil {
			return true, ""
		}
		if err != nil || !isErr || !strings.HasPrefix(text, "DENIED: ") {
			return false, fmt.Sprint(text, err)
		}
		text, isErr, err = c.modernCall(ctx, "stdiosrv", mallory, "echo", map[string]any{"text": "x"})
		return ctx.Err() != nil || (err == nil && isErr && strings.HasPrefix(text, "DENIED: ")), fmt.Sprint(text, err)
	})
	hostile("oversized body", 300*time.Millisecond, func(ctx context.Context) (bool, string) {
		big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{"filter":"` + strings.Repeat("x", 100<<10) + `","file":"data/in.json"}}}`
		r := c.post(ctx, "/mcp/json-tools", alice, "", "application/json", nil, []byte(big))
		return r.status == http.StatusRequestEntityTooLarge, r.String()
	})
	for i := range 3 {
		hostile(fmt.Sprint("slow body ", i), time.Second, func(ctx context.Context) (bool, string) {
			held, answer := slowBody(ctx, strings.TrimPrefix(d.base, "http://"), alice)
			st.slowHeld(held)
			return ctx.Err() != nil || (strings.Contains(answer, "413") && held < 6*time.Second), fmt.Sprintf("held %s: %s", held, answer)
		})
	}
	hostile("session flood", 100*time.Millisecond, func(ctx context.Context) (bool, string) {
		surface := "stdiosrv"
		if time.Now().UnixNano()%2 == 0 {
			surface = "json-tools"
		}
		r := c.post(ctx, "/mcp/"+surface, mallory, "", "application/json", nil, []byte(hardenInit))
		st.flood(r.status)
		return ctx.Err() != nil || r.status == http.StatusOK || (r.status == http.StatusTooManyRequests && strings.Contains(r.body, "max_per_agent")), r.String()
	})
	hostile("id-less calls", 200*time.Millisecond, func(ctx context.Context) (bool, string) {
		for _, body := range []string{
			`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"query","arguments":{"filter":".","file":"data/in.json"}}}`,
			`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"query","arguments":{"filter":".","file":"data/in.json"}}}`,
		} {
			r := c.post(ctx, "/mcp/json-tools", alice, aliceSess.sid, "application/json", nil, []byte(body))
			if ctx.Err() == nil && r.status != http.StatusBadRequest {
				return false, r.String()
			}
		}
		r := c.modernRaw(ctx, "json-tools", alice, "query", []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{`+modernMeta+`,"name":"query","arguments":{"filter":".","file":"data/in.json"}}}`))
		return ctx.Err() != nil || r.status == http.StatusBadRequest, r.String()
	})
	hostile("modern header mismatch", 200*time.Millisecond, func(ctx context.Context) (bool, string) {
		r := c.modernRaw(ctx, "json-tools", alice, "keys", []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{`+modernMeta+`,"name":"query","arguments":{"filter":".","file":"data/in.json"}}}`))
		return ctx.Err() != nil || (r.status == http.StatusBadRequest && strings.Contains(r.body, "Header mismatch")), r.String()
	})
	hostile("text/plain and bad tokens", 200*time.Millisecond, func(ctx context.Context) (bool, string) {
		r := c.post(ctx, "/mcp/stdiosrv", "", "", "text/plain", nil, []byte(hardenInit))
		r2 := c.post(ctx, "/mcp/stdiosrv", "not-a-token", "", "application/json", nil, []byte(hardenInit))
		return ctx.Err() != nil || (r.status == http.StatusUnsupportedMediaType && r2.status == http.StatusUnauthorized), r.String() + " / " + r2.String()
	})

	// The sampler.
	type sample struct {
		at         time.Duration
		rssKiB     int64
		threads    int
		goroutines int
		fds        int
		procs      int
	}
	var samples []sample
	start := time.Now()
	sampleNow := func() sample {
		p, err := sampleProc(pid)
		if err != nil {
			t.Fatalf("sample toolgate: %v", err)
		}
		return sample{at: time.Since(start), rssKiB: p.rssKiB, threads: p.threads, goroutines: c.goroutines(t),
			fds: p.fds, procs: len(callProcesses(pid))}
	}
	tick := time.NewTicker(2 * time.Second)
sampling:
	for {
		select {
		case <-ctx.Done():
			break sampling
		case <-tick.C:
			samples = append(samples, sampleNow())
		}
	}
	tick.Stop()
	wg.Wait()
	loadEnded := time.Since(start)
	for _, s := range []*soakSession{aliceSess, mallorySess} {
		deleteSession(t, s.url, s.token, s.sid)
	}
	// Quiet: sessions idle out (idle_ttl 3s) and their processes exit.
	// What stays is each agent's stateless relay to the stdio server (one
	// process per agent and server, for 2026-07-28 requests, until the
	// gateway stops): alice, bob and mallory — each the server and the
	// supervisor it runs under. (The gateway's one containment watcher is
	// not counted: it lives as long as the gateway, not a call.)
	const relays = 3 * 2
	quiet := sampleNow()
	deadline := time.Now().Add(30 * time.Second)
	for quiet.procs > relays && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		quiet = sampleNow()
	}

	// Figures.
	warm := len(samples) / 4
	if len(samples)-warm < 6 {
		t.Fatalf("%d samples: the soak is too short to judge", len(samples))
	}
	early, late := samples[warm:warm+(len(samples)-warm)/2], samples[warm+(len(samples)-warm)/2:]
	maxOf := func(ss []sample, f func(sample) int64) int64 {
		var m int64
		for _, s := range ss {
			m = max(m, f(s))
		}
		return m
	}
	metrics := []struct {
		name  string
		f     func(sample) int64
		slack int64 // growth allowed beyond 25% of the early maximum
		unit  string
	}{
		{"RSS", func(s sample) int64 { return s.rssKiB >> 10 }, 24, "MB"},
		{"threads", func(s sample) int64 { return int64(s.threads) }, 8, ""},
		{"goroutines", func(s sample) int64 { return int64(s.goroutines) }, 64, ""},
		{"open fds", func(s sample) int64 { return int64(s.fds) }, 32, ""},
		{"child processes", func(s sample) int64 { return int64(s.procs) }, 4, ""},
	}
	var series []string
	for _, s := range samples {
		series = append(series, fmt.Sprintf("%ds:%dMB/%dt/%dg/%dfd/%dp", int(s.at.Seconds()), s.rssKiB>>10, s.threads, s.goroutines, s.fds, s.procs))
	}
	t.Logf("soak: %s of load, %d samples (RSS/threads/goroutines/fds/child processes): %s", loadEnded.Round(time.Second), len(samples), strings.Join(series, " "))
	for _, m := range metrics {
		e, l := maxOf(early, m.f), maxOf(late, m.f)
		t.Logf("soak: %s after warm-up: max %d%s in the first half, %d%s in the second; after the load %d%s", m.name, e, m.unit, l, m.unit, m.f(quiet), m.unit)
		if l > e+e/4+m.slack {
			t.Errorf("soak: %s grew from %d%s to %d%s after warm-up", m.name, e, m.unit, l, m.unit)
		}
	}
	if quiet.procs > relays {
		var left []string
		for _, p := range callProcesses(pid) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
			left = append(left, fmt.Sprintf("%d %s", p, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
		t.Errorf("soak: %d child processes still run 30s after the load (%d expected: 3 stateless relays, each a server and its supervisor): %s", quiet.procs, relays, strings.Join(left, "; "))
	}
	st.report(t)

	// The audit: every allowed call has its decision and outcome, at least
	// as many allowed decisions as calls the clients saw succeed, and the
	// chain verifies.
	children := descendants(pid)
	took := stopDaemon(t, d, 30*time.Second)
	var left []int
	for _, p := range children {
		if procRunning(p) {
			left = append(left, p)
		}
	}
	t.Logf("soak: gateway exited %s after SIGTERM; of its %d child processes %d are left", took.Round(time.Millisecond), len(children), len(left))
	if len(left) > 0 {
		t.Errorf("processes %v outlived the gateway", left)
	}
	evs := readAudit(t, filepath.Join(dir, "audit.jsonl"))
	outcome := map[int64]bool{}
	for _, ev := range evs {
		if ev.Of != nil {
			outcome[*ev.Of] = true
		}
	}
	allows, denies, missing := map[string]int{}, map[string]int{}, 0
	for _, ev := range evs {
		if !ev.isCallDecision() {
			continue
		}
		key := ev.Agent + " " + ev.Action
		switch ev.Decision {
		case "allow":
			allows[key]++
			if !outcome[ev.Seq] {
				missing++
			}
		case "deny":
			denies[ev.Agent]++
		}
	}
	t.Logf("soak: audit: %d events; allowed decisions %v; denied decisions by agent %v; allowed calls without an outcome event: %d", len(evs), allows, denies, missing)
	if missing != 0 {
		t.Errorf("%d allowed calls have no outcome event", missing)
	}
	for label, n := range st.okByLabel() {
		if allows[label] < n {
			t.Errorf("%s: clients saw %d calls succeed, the audit allowed %d", label, n, allows[label])
		}
	}
	if denies["mallory"] == 0 || denies["alice"] == 0 {
		t.Errorf("the hostile calls left no deny decisions: %v", denies)
	}
	r := toolgate(t, dir, nil, "audit", "verify", filepath.Join(dir, "audit.jsonl"))
	t.Logf("soak: audit verify: exit %d: %s", r.code, strings.TrimSpace(r.stdout))
	if r.code != 0 || strings.Contains(r.stdout, "finding:") {
		t.Errorf("audit verify: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// soakStats counts what the soak's workers saw.
type soakStats struct {
	mu        sync.Mutex
	ok        map[string]int // agent + " " + action → successful calls
	byEra     map[string]int
	failures  map[string]int
	examples  []string
	hostileN  map[string]int
	hostileOK map[string]int
	floods    map[int]int
	slowMax   time.Duration
	slowN     atomic.Int64
}

func newSoakStats() *soakStats {
	return &soakStats{ok: map[string]int{}, byEra: map[string]int{}, failures: map[string]int{}, hostileN: map[string]int{}, hostileOK: map[string]int{}, floods: map[int]int{}}
}

func (s *soakStats) normal(label, era, text string, isErr bool, err error, want string) {
	if err != nil && errorsIsContext(err) {
		return // the soak ended mid-call
	}
	if err != nil || isErr || !strings.Contains(text, want) {
		s.fail(era+" "+label, fmt.Sprintf("%s (isError %v, err %v)", text, isErr, err))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ok[label]++
	s.byEra[era]++
}

func errorsIsContext(err error) bool {
	return strings.Contains(err.Error(), "context deadline exceeded") || strings.Contains(err.Error(), "context canceled")
}

func (s *soakStats) fail(what, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[what]++
	if len(s.examples) < 8 {
		s.examples = append(s.examples, what+": "+firstLine(detail))
	}
}

func (s *soakStats) hostile(name string, ok bool, what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hostileN[name]++
	if ok {
		s.hostileOK[name]++
	} else if len(s.examples) < 8 {
		s.examples = append(s.examples, "hostile "+name+" not refused as expected: "+firstLine(what))
	}
}

func (s *soakStats) flood(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.floods[status]++
}

func (s *soakStats) slowHeld(d time.Duration) {
	s.slowN.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slowMax = max(s.slowMax, d)
}

func (s *soakStats) okByLabel() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.ok {
		out[k] = v
	}
	return out
}

func (s *soakStats) report(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for _, n := range s.ok {
		total += n
	}
	var hostile []string
	for _, name := range slices.Sorted(maps.Keys(s.hostileN)) {
		hostile = append(hostile, fmt.Sprintf("%s %d/%d", name, s.hostileOK[name], s.hostileN[name]))
	}
	t.Logf("soak: normal calls succeeded %d (legacy %d, modern %d), failed %v", total, s.byEra["legacy"], s.byEra["modern"], s.failures)
	t.Logf("soak: hostile requests refused as expected: %s; session flood answers by status %v; %d slow bodies, longest held %s",
		strings.Join(hostile, ", "), s.floods, s.slowN.Load(), s.slowMax.Round(time.Millisecond))
	for _, e := range s.examples {
		t.Log("soak: " + e)
	}
	if len(s.failures) > 0 {
		t.Errorf("normal calls failed: %v", s.failures)
	}
	for name, n := range s.hostileN {
		if s.hostileOK[name] != n {
			t.Errorf("hostile %s: %d of %d refused as expected", name, s.hostileOK[name], n)
		}
	}
	if s.byEra["legacy"] == 0 || s.byEra["modern"] == 0 || s.floods[http.StatusTooManyRequests] == 0 {
		t.Errorf("the soak did not exercise both eras and the session cap: %v %v", s.byEra, s.floods)
	}
}

// soakClient speaks raw MCP streamable HTTP to the daemon over a pool of
// keep-alive connections.
type soakClient struct {
	base string
	hc   *http.Client
}

// soakReply is one HTTP exchange.
type soakReply struct {
	status int
	sid    string
	body   string
	msgs   []json.RawMessage
	err    error
}

func (r soakReply) String() string {
	if r.err != nil {
		return r.err.Error()
	}
	b := r.body
	if len(b) > 200 {
		b = b[:200]
	}
	return fmt.Sprintf("HTTP %d %s", r.status, strings.TrimSpace(b))
}

func (c *soakClient) post(ctx context.Context, path, token, sid, contentType string, hdr map[string]string, body []byte) soakReply {
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+path, bytes.NewReader(body))
	if err != nil {
		return soakReply{err: err}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return soakReply{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	r := soakReply{status: resp.StatusCode, sid: resp.Header.Get("Mcp-Session-Id"), body: string(data), err: err}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: "); ok {
				r.msgs = append(r.msgs, json.RawMessage(d))
			}
		}
	} else if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		r.msgs = append(r.msgs, json.RawMessage(t))
	}
	return r
}

// goroutines reads go_goroutines from the gateway's /metrics (the admin
// token's): an endpoint the gateway has anyway.
func (c *soakClient) goroutines(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "go_goroutines %d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("GET /metrics: HTTP %d without go_goroutines", resp.StatusCode)
	return 0
}

// soakSession is one 2025-era session.
type soakSession struct {
	c          *soakClient
	url, token string
	path, sid  string
	next       atomic.Int64
}

func (c *soakClient) open(ctx context.Context, surface, token string) (*soakSession, error) {
	path := "/mcp/" + surface
	r := c.post(ctx, path, token, "", "application/json", nil, []byte(hardenInit))
	if r.err != nil || r.status != http.StatusOK || r.sid == "" {
		return nil, fmt.Errorf("initialize %s: %s", surface, r)
	}
	s := &soakSession{c: c, url: c.base + path, token: token, path: path, sid: r.sid}
	if r := c.post(ctx, path, token, r.sid, "application/json", nil, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); r.err != nil || r.status != http.StatusAccepted {
		return nil, fmt.Errorf("initialized %s: %s", surface, r)
	}
	return s, nil
}

func (s *soakSession) call(ctx context.Context, tool string, args map[string]any) (string, bool, error) {
	params, _ := json.Marshal(map[string]any{"name": tool, "arguments": args})
	return s.rawCall(ctx, string(params))
}

// rawCall sends a tools/call with params exactly as given.
func (s *soakSession) rawCall(ctx context.Context, params string) (string, bool, error) {
	id := s.next.Add(1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
	r := s.c.post(ctx, s.path, s.token, s.sid, "application/json", nil, []byte(body))
	return toolReply(r, fmt.Sprint(id))
}

// modernCall sends a 2026-07-28 tools/call (no session).
func (c *soakClient) modernCall(ctx context.Context, surface, token, tool string, args map[string]any) (string, bool, error) {
	a, _ := json.Marshal(args)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"m1","method":"tools/call","params":{%s,"name":%q,"arguments":%s}}`, modernMeta, tool, a)
	return toolReply(c.modernRaw(ctx, surface, token, tool, []byte(body)), `"m1"`)
}

// modernRaw posts body as a 2026-07-28 request whose Mcp-Name header is
// name.
func (c *soakClient) modernRaw(ctx context.Context, surface, token, name string, body []byte) soakReply {
	return c.post(ctx, "/mcp/"+surface, token, "", "application/json", map[string]string{
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
	}, body)
}

// toolReply reads the response with that raw id as a tool result: its
// text and isError, or a JSON-RPC error's message with isError true.
func toolReply(r soakReply, id string) (string, bool, error) {
	if r.err != nil {
		return "", false, r.err
	}
	for _, msg := range r.msgs {
		if !isResponseTo(msg, id) {
			continue
		}
		text, isErr := reply{msgs: []json.RawMessage{msg}}.toolText()
		return text, isErr, nil
	}
	return "", false, fmt.Errorf("no response with id %s: %s", id, r)
}

// slowBody trickles a tools/call one byte every 500ms and returns how long
// the gateway held the connection, and its answer.
func slowBody(ctx context.Context, host, token string) (time.Duration, string) {
	conn, err := net.Dial("tcp", host)
	if err != nil {
		return 0, err.Error()
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{"filter":".","file":"data/in.json"}}}`
	fmt.Fprintf(conn, "POST /mcp/json-tools HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", host, token, len(body))
	start := time.Now()
	done := make(chan string, 1)
	go func() {
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			done <- "no answer: " + err.Error()
			return
		}
		_, _ = io.Copy(io.Discard, br) // until the gateway closes it
		done <- fmt.Sprint(resp.StatusCode)
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		if i < len(body) {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return time.Since(start), <-done
			}
		}
		select {
		case answer := <-done:
			return time.Since(start), answer
		case <-tick.C:
		case <-ctx.Done():
			return time.Since(start), "soak ended"
		case <-time.After(20 * time.Second):
			return time.Since(start), "held 20s"
		}
	}
}

// callProcesses lists pid's descendants except the gateway's containment
// watcher (one per gateway, started with it), so what is left is what
// calls and sessions started.
func callProcesses(pid int) []int {
	var out []int
	for _, p := range descendants(pid) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		if arg0, _, _ := bytes.Cut(cmdline, []byte{0}); string(arg0) == supervisor.WatchArg0 {
			continue
		}
		out = append(out, p)
	}
	return out
}
