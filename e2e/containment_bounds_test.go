package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// The containment bounds of the gateway, each an outside attacker's
// finding turned into a test against the built binary: listen streams
// without end, a stdio server that stops reading, an audit tail cut
// without a signing key.

// needJQ fails (under CI) or skips a test that needs jq for its pack
// surface.
func needJQ(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("jq is not installed; run scripts/ci-deps/bundled.sh")
		}
		t.Skip("jq is not installed; run scripts/ci-deps/bundled.sh")
	}
}

// listenRequest opens a 2026-07-28 subscriptions/listen stream on u under
// ctx; the caller reads or closes the body.
func listenRequest(ctx context.Context, hc *http.Client, u, token string, id int) (*http.Response, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},%s}}`, id, modernMeta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	return hc.Do(req)
}

// TestGatewayStreamCap: one agent asks for 200 subscriptions/listen
// streams with gateway.streams.max_per_agent: 4. Four open (each
// acknowledged), 196 are refused at once with the cap named; once all are
// closed the gateway's goroutines (go_goroutines on /metrics) and open
// descriptors (/proc/<pid>/fd) are back to what they were before.
func TestGatewayStreamCap(t *testing.T) {
	t.Parallel()
	needJQ(t)
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  admin_token: {env: TG_ADMIN_TOKEN}
  streams: {max_per_agent: 4}
command_packs:
  - use: bundled/json-tools
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [pack:json-tools]
`)
	d := startDaemon(t, append(hardenEnv, "TG_ADMIN_TOKEN="+adminToken), "-w", ws)
	pid := d.cmd.Process.Pid
	u := d.base + "/mcp/json-tools"
	// /metrics through a client of its own: its one kept connection is in
	// every sample alike.
	metricsClient := &soakClient{base: d.base, hc: &http.Client{Timeout: 10 * time.Second}}
	streams := &http.Transport{MaxIdleConnsPerHost: -1}
	hc := &http.Client{Transport: streams}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Warm up: the agent's endpoint is built on first use.
	resp, err := listenRequest(ctx, hc, u, hardenToken, 0)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("first listen: %v %v", resp, err)
	}
	resp.Body.Close()
	streams.CloseIdleConnections()
	var baseG, baseFD int
	waitFor(t, 10*time.Second, "a steady baseline", func() bool {
		g1, s1 := metricsClient.goroutines(t), fdCount(t, pid)
		time.Sleep(100 * time.Millisecond)
		baseG, baseFD = metricsClient.goroutines(t), fdCount(t, pid)
		return g1 == baseG && s1 == baseFD
	})

	const asked = 200
	type outcome struct {
		resp *http.Response
		err  error
		body string
	}
	outcomes := make([]outcome, asked)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range asked {
		wg.Go(func() {
			resp, err := listenRequest(ctx, hc, u, hardenToken, i+1)
			o := outcome{resp: resp, err: err}
			if err == nil && resp.StatusCode == http.StatusOK {
				// Opened: its first event is the acknowledgement.
				br := bufio.NewReader(resp.Body)
				line, rerr := br.ReadString('\n')
				for rerr == nil && !strings.HasPrefix(line, "data:") {
					line, rerr = br.ReadString('\n')
				}
				o.body = line
			} else if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				o.body = string(b)
			}
			outcomes[i] = o
		})
	}
	wg.Wait()
	took := time.Since(start)
	opened, refused := 0, 0
	for i, o := range outcomes {
		switch {
		case o.err != nil:
			t.Errorf("listen %d: %v", i, o.err)
		case o.resp.StatusCode == http.StatusOK:
			opened++
			if !strings.Contains(o.body, "notifications/subscriptions/acknowledged") {
				t.Errorf("listen %d opened without its acknowledgement: %q", i, o.body)
			}
		case o.resp.StatusCode == http.StatusTooManyRequests && strings.Contains(o.body, `too many open streams for agent \"dev\" (the cap is gateway.streams.max_per_agent = 4)`):
			refused++
		default:
			t.Errorf("listen %d: HTTP %d %s", i, o.resp.StatusCode, o.body)
		}
	}
	peakG, peakFD := metricsClient.goroutines(t), fdCount(t, pid)
	t.Logf("stream cap: %d listen streams asked with max_per_agent 4: %d opened, %d refused (429, cap named) in %s; goroutines %d → %d, fds %d → %d while open",
		asked, opened, refused, took.Round(time.Millisecond), baseG, peakG, baseFD, peakFD)
	if opened != 4 || refused != asked-4 {
		t.Fatalf("%d opened and %d refused, want 4 and %d", opened, refused, asked-4)
	}
	// The client closes its streams: every slot, goroutine and descriptor
	// goes back.
	for _, o := range outcomes {
		if o.err == nil && o.resp.StatusCode == http.StatusOK {
			o.resp.Body.Close()
		}
	}
	streams.CloseIdleConnections()
	var g, fds int
	waitFor(t, 15*time.Second, "goroutines and descriptors back to the baseline", func() bool {
		g, fds = metricsClient.goroutines(t), fdCount(t, pid)
		return g <= baseG && fds <= baseFD
	})
	t.Logf("stream cap: after closing them all: goroutines %d (baseline %d), fds %d (baseline %d)", g, baseG, fds, baseFD)
	// And the places are free again.
	resp, err = listenRequest(ctx, hc, u, hardenToken, 999)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("listen after all closed: %v %v", resp, err)
	}
	resp.Body.Close()
}

// fdCount is the number of open descriptors of pid.
func fdCount(t testing.TB, pid int) int {
	t.Helper()
	s, err := sampleProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	return s.fds
}

// TestGatewayHungDownstream: a stdio server that answers initialize and
// then never reads stdin again (alive; it ignores SIGTERM too), behind a
// 3 s timeout. Its tools/list fails; each call still answers within its
// timeout (bound: timeout + 0.5 s, a correctness bound with a generous
// margin for a loaded machine, not a benchmark), however many calls follow
// the failed listing (it is retried in the background, not on requests);
// DELETE of the session answers within 0.5 s; the server is stopped
// behind it, and no server process is left once the gateway exits.
func TestGatewayHungDownstream(t *testing.T) {
	t.Parallel()
	pids := newPidDir(t)
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
mcp_servers:
  - id: hung
    command: [%s, -stdio, -hang-after-init, -ignore-term, -pids, %s]
    protocol_version: "2025-06-18"
    permission: open
    timeout: 3s
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [tool:hung:echo]
`, hostileBinary(t), pids))
	d := startDaemon(t, hardenEnv, "-w", ws)
	u := d.base + "/mcp/hung"
	const timeout = 3 * time.Second
	const bound = timeout + 500*time.Millisecond

	s := rawConnect(t, u, hardenToken) // the first listing fails meanwhile
	alive := pids.alive()
	if len(alive) != 1 {
		t.Fatalf("servers running after initialize: %v, want the session's one", alive)
	}
	sessionPid := alive[0]
	// Three calls in a row outlast the old 5 s listing retry: none may
	// pay for a listing.
	for i := range 3 {
		start := time.Now()
		text, isErr := s.callText("echo", map[string]any{"text": "hi"})
		took := time.Since(start)
		t.Logf("hung downstream: call %d answered after %s: %s", i+1, took.Round(time.Millisecond), text)
		if !isErr || !strings.Contains(text, "did not answer tools/call within 3s") {
			t.Errorf("call %d: %q (isError %v)", i+1, text, isErr)
		}
		if took > bound {
			t.Errorf("call %d took %s with a %s timeout (bound %s)", i+1, took.Round(time.Millisecond), timeout, bound)
		}
	}
	start := time.Now()
	if code := deleteSession(t, u, hardenToken, s.sid); code != http.StatusOK {
		t.Errorf("DELETE: %d", code)
	}
	took := time.Since(start)
	waitFor(t, 20*time.Second, "the session's hung server stopped", func() bool { return !procRunning(sessionPid) })
	t.Logf("hung downstream: DELETE answered after %s; its server (ignoring SIGTERM) gone %s after it",
		took.Round(100*time.Microsecond), time.Since(start).Round(time.Millisecond))
	if took > 500*time.Millisecond {
		t.Errorf("DELETE took %s (bound 0.5 s)", took)
	}
	stopDaemon(t, d, 60*time.Second)
	if left := pids.alive(); len(left) != 0 {
		t.Errorf("server processes %v outlived the gateway (%d started)", left, len(pids.started()))
	}
	t.Logf("hung downstream: %d server processes started (the session's and the listings'), none left", len(pids.started()))
}

// TestGatewayAuditAnchor: without a signing key (the default) the chain
// head is on /metrics and in the log, and `audit verify --head` with it
// catches what a plain verify passes: the tail cut, the file emptied, the
// chain rewritten from scratch; `check` warns of the missing key.
func TestGatewayAuditAnchor(t *testing.T) {
	t.Parallel()
	needJQ(t)
	dir := t.TempDir()
	writeFile(t, dir, "data/in.json", `{"a": 1}`)
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: always}
  admin_token: {env: TG_ADMIN_TOKEN}
command_packs:
  - use: bundled/json-tools
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants:
      - op: tool:json-tools:keys
        param_constraints: {file: {path_within: data}}
`)
	if r := toolgate(t, dir, nil, "check", "-w", ws); r.code != 0 ||
		!strings.Contains(r.stderr, "warning: gateway.audit.signing_key is not set: a truncated or rewritten audit tail cannot be detected") ||
		!strings.Contains(r.stderr, "toolgate audit keygen") || !strings.Contains(r.stderr, "signing_key: {file: audit-signing.key}") {
		t.Errorf("check without a signing key: %d\n%s", r.code, r.stderr)
	}
	d := startDaemon(t, append(hardenEnv, "TG_ADMIN_TOKEN="+adminToken), "-w", ws)
	s := rawConnect(t, d.base+"/mcp/json-tools", hardenToken)
	for range 5 {
		if text, isErr := s.callText("keys", map[string]any{"file": "data/in.json"}); isErr {
			t.Fatalf("keys: %s", text)
		}
	}
	seq, anchor := scrapeAuditHead(t, d.base)
	if seq < 10 || anchor.Seq < 1 || anchor.Seq > seq {
		t.Fatalf("/metrics: head seq %d, anchor %v", seq, anchor)
	}
	t.Logf("audit anchor: /metrics says head seq %d, anchor %s", seq, anchor)
	stopDaemon(t, d, 30*time.Second)
	var closing audit.Anchor
	waitFor(t, 10*time.Second, "the head logged at close", func() bool {
		for _, line := range d.logLines() {
			var rec struct{ Msg, Anchor, At string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "audit chain head" && rec.At == "close" {
				a, err := audit.ParseAnchor(rec.Anchor)
				closing = a
				return err == nil
			}
		}
		return false
	})
	path := filepath.Join(dir, "audit.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := toolgate(t, dir, nil, "audit", "verify", path, "--head", closing.String()); r.code != 0 || !strings.Contains(r.stdout, "anchored: the chain holds seq") {
		t.Fatalf("the intact log against the head logged at close: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := toolgate(t, dir, nil, "audit", "verify", path, "--head", anchor.String()); r.code != 0 {
		t.Fatalf("the intact log against the anchor on /metrics: %d %s %s", r.code, r.stdout, r.stderr)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	forged := forgedLog(t, closing.Seq+3)
	cases := []struct {
		name string
		data []byte
	}{
		{"last 3 lines dropped", bytes.Join(lines[:len(lines)-4], nil)},
		{"truncated to zero", nil},
		{"rewritten from scratch", forged},
	}
	for _, c := range cases {
		p := filepath.Join(dir, "tampered.jsonl")
		if err := os.WriteFile(p, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		plain := toolgate(t, dir, nil, "audit", "verify", p)
		if plain.code != 0 || !strings.Contains(plain.stdout, "not proven: without a signing key this check cannot detect a truncated or rewritten tail") {
			t.Errorf("%s: a plain verify: %d %s %s", c.name, plain.code, plain.stdout, plain.stderr)
		}
		r := toolgate(t, dir, nil, "audit", "verify", p, "--head", closing.String())
		t.Logf("audit anchor: %s: plain verify exit %d; with --head exit %d: %s", c.name, plain.code, r.code, strings.TrimSpace(r.stderr))
		if r.code == 0 || !strings.Contains(r.stderr, "anchored head") {
			t.Errorf("%s: verify --head %s: %d %s %s", c.name, closing, r.code, r.stdout, r.stderr)
		}
	}
}

// scrapeAuditHead reads toolgate_audit_head_seq and the one
// toolgate_audit_anchor_info series from /metrics.
func scrapeAuditHead(t *testing.T, base string) (int64, audit.Anchor) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var seq int64
	var anchors []audit.Anchor
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if _, err := fmt.Sscanf(line, "toolgate_audit_head_seq %d", &seq); err == nil {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "toolgate_audit_anchor_info{"); ok {
			var a audit.Anchor
			labels, _, _ := strings.Cut(rest, "}")
			for _, kv := range strings.Split(labels, ",") {
				k, v, _ := strings.Cut(kv, "=")
				v = strings.Trim(v, `"`)
				switch k {
				case "seq":
					fmt.Sscan(v, &a.Seq)
				case "hash":
					a.Hash = v
				}
			}
			anchors = append(anchors, a)
		}
	}
	if len(anchors) != 1 {
		t.Fatalf("/metrics has %d toolgate_audit_anchor_info series, want one", len(anchors))
	}
	return seq, anchors[0]
}

// forgedLog is a chain of n events written from scratch, hashes and all,
// as anyone who can write the file can (no key needed).
func forgedLog(t *testing.T, n int64) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "forged.jsonl")
	l, err := audit.Open(p, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := l.Append(&audit.Event{Agent: "dev", Decision: "deny", Action: "command:call:json-tools:keys", Reason: "forged"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
