package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/audit"
)

// approvalsWorkspace has a cautious write (notes:append, auto-approved by
// rule 1 for short texts) and a strict write (vault:stash, which rule 2
// names but, being strict, never auto-approves).
const approvalsWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  admin_token: {env: TG_ADMIN_TOKEN}
  approvals:
    wait: WAIT
    ttl: TTL
    rules:
      - agent: writer
        capability: tool:notes:append
        param_constraints: {text: {max_length: 20}}
      - {agent: writer, capability: "tool:vault:*"}
command_packs:
  - id: notes
    permission: cautious
    commands:
      - id: append
        description: Append a line to the notes.
        argv: [ARGVECHO, append, "{text}"]
        inputs: {type: object, properties: {text: {type: string}}, required: [text]}
        effects: write
  - id: vault
    permission: strict
    commands:
      - id: stash
        description: Put an item in the vault.
        argv: [ARGVECHO, stash, "{item}"]
        inputs: {type: object, properties: {item: {type: string}}, required: [item]}
        effects: write
agents:
  - id: writer
    token: {env: WRITER_TOKEN}
    grants: [tool:notes:append, tool:vault:stash]
`

const (
	adminToken  = "admin-secret-token-for-tests"
	writerToken = "writer-secret-token"
)

var approvalsEnv = []string{"TG_ADMIN_TOKEN=" + adminToken, "WRITER_TOKEN=" + writerToken}

// approvalsDaemon starts a daemon on a fresh approvals workspace.
func approvalsDaemon(t *testing.T, wait, ttl string) (*daemon, string) {
	t.Helper()
	dir := t.TempDir()
	y := strings.NewReplacer("ARGVECHO", argvEcho, "WAIT", wait, "TTL", ttl).Replace(approvalsWorkspace)
	ws := writeFile(t, dir, "toolgate.yaml", y)
	return startDaemon(t, approvalsEnv, "-w", ws), dir
}

// pendingEntry is one element of `toolgate approvals list --format json`.
type pendingEntry struct {
	ID        string          `json:"id"`
	Agent     string          `json:"agent"`
	Action    string          `json:"action"`
	Arguments json.RawMessage `json:"arguments"`
	Expires   time.Time       `json:"expires"`
}

// approvalsCLI runs `toolgate approvals --server d.base args…` as an operator.
func approvalsCLI(t *testing.T, d *daemon, args ...string) result {
	t.Helper()
	return toolgate(t, t.TempDir(), []string{"TOOLGATE_ADMIN_TOKEN=" + adminToken}, append([]string{"approvals", "--server", d.base}, args...)...)
}

// awaitPending polls `toolgate approvals list --format json` until a
// request other than those in skip is pending, and returns it.
func awaitPending(t *testing.T, d *daemon, skip ...string) pendingEntry {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r := approvalsCLI(t, d, "list", "--format", "json")
		if r.code != 0 {
			t.Fatalf("approvals list: exit %d: %s", r.code, r.stderr)
		}
		var list []pendingEntry
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("approvals list --format json: %v\n%s", err, r.stdout)
		}
	next:
		for _, p := range list {
			for _, s := range skip {
				if p.ID == s {
					continue next
				}
			}
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no approval request became pending")
	return pendingEntry{}
}

// callResult is a tool call that ran in the background.
type callResult struct {
	text  string
	isErr bool
	err   error
}

func callAsync(t *testing.T, cl *client.Client, tool string, args map[string]any, meta *mcp.Meta) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		req.Params.Meta = meta
		res, err := cl.CallTool(ctx, req)
		if err != nil {
			ch <- callResult{err: err}
			return
		}
		var parts []string
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		ch <- callResult{text: strings.Join(parts, "\n"), isErr: res.IsError}
	}()
	return ch
}

func receive(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("tool call: %v", r.err)
		}
		return r
	case <-time.After(90 * time.Second):
		t.Fatal("the tool call never returned")
	}
	return callResult{}
}

// auditEvents reads the audit log of a workspace directory.
func auditEvents(t *testing.T, path string) []audit.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

// approvalOf decodes an event's approval field.
func approvalOf(ev audit.Event) (id, by string) {
	var a struct{ ID, By string }
	_ = json.Unmarshal(ev.Approval, &a)
	return a.ID, a.By
}

// TestStrictCallWaitsForTheCLI: a strict call waits (with progress), an
// operator approves it with `toolgate approvals approve`, and it completes;
// replaying the same arguments needs a new approval, which the operator
// denies, and the agent is told why.
func TestStrictCallWaitsForTheCLI(t *testing.T) {
	t.Parallel()
	d, dir := approvalsDaemon(t, "60s", "10m")
	cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)
	var mu sync.Mutex
	var progress []string
	cl.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			progress = append(progress, n.Params.AdditionalFields["message"].(string))
			mu.Unlock()
		}
	})

	started := time.Now()
	first := callAsync(t, cl, "stash", map[string]any{"item": "gold"}, &mcp.Meta{ProgressToken: "tok-1"})
	p := awaitPending(t, d)
	var args bytes.Buffer
	_ = json.Compact(&args, p.Arguments)
	if p.Agent != "writer" || p.Action != "command:call:vault:stash" || args.String() != `{"item":"gold"}` || !p.Expires.After(started) {
		t.Fatalf("pending = %+v, want writer's vault:stash with {\"item\":\"gold\"}", p)
	}
	select {
	case r := <-first:
		t.Fatalf("the strict call returned before approval: %+v", r)
	default:
	}
	r := approvalsCLI(t, d, "approve", p.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "approved "+p.ID) {
		t.Fatalf("approvals approve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := receive(t, first)
	if got.isErr || strings.TrimSpace(got.text) != `["stash","gold"]` {
		t.Fatalf("approved call: %+v, want the command's output", got)
	}
	mu.Lock()
	if len(progress) == 0 || !strings.Contains(progress[0], p.ID) {
		t.Errorf("progress notifications = %q, want at least one naming %s", progress, p.ID)
	}
	mu.Unlock()

	// The same arguments again: the approval was used up.
	replay := callAsync(t, cl, "stash", map[string]any{"item": "gold"}, nil)
	p2 := awaitPending(t, d, p.ID)
	if r := approvalsCLI(t, d, "deny", p2.ID, "--reason", "once is enough"); r.code != 0 || !strings.Contains(r.stdout, "denied "+p2.ID) {
		t.Fatalf("approvals deny: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got = receive(t, replay)
	if want := "DENIED: approval " + p2.ID + " denied by operator: once is enough"; !got.isErr || !strings.HasPrefix(got.text, want) {
		t.Errorf("replayed call: %+v, want %q", got, want)
	}
	if r := approvalsCLI(t, d, "approve", p2.ID); r.code == 0 || !strings.Contains(r.stderr, "denied") {
		t.Errorf("approving a denied request: exit %d %s, want a refusal saying it is denied", r.code, r.stderr)
	}

	var ran, approved, denied int
	for _, ev := range auditEvents(t, filepath.Join(dir, "audit.jsonl")) {
		id, by := approvalOf(ev)
		switch {
		case ev.Decision == "completed" && ev.Exit != nil:
			ran++
			if id != p.ID || by != "operator" {
				t.Errorf("executed call's approval = %s by %s, want %s by operator", id, by, p.ID)
			}
		case ev.Decision == "approved":
			approved++
		case ev.Decision == "denied":
			denied++
		}
	}
	if ran != 1 || approved != 1 || denied != 1 {
		t.Errorf("audit: %d executed, %d approved, %d denied events; want 1 each", ran, approved, denied)
	}
	if r := toolgate(t, dir, nil, "audit", "verify", "audit.jsonl"); r.code != 0 {
		t.Errorf("audit verify: %s%s", r.stdout, r.stderr)
	}
}

// TestApprovalBindingAndExpiry uses a short wait, so calls come back with
// "approval pending" at once: an approval covers only the exact arguments,
// and an approval left unused past the TTL refuses.
func TestApprovalBindingAndExpiry(t *testing.T) {
	t.Parallel()
	d, dir := approvalsDaemon(t, "100ms", "4s")
	cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)

	pendingID := func(text string) string {
		t.Helper()
		const prefix = "DENIED: approval pending "
		if !strings.HasPrefix(text, prefix) {
			t.Fatalf("call: %q, want %s<id>", text, prefix)
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(text, prefix), " ")
		return id
	}

	text, _, _, _ := call(t, cl, "stash", map[string]any{"item": "gold"})
	gold := pendingID(text)
	if r := approvalsCLI(t, d, "approve", gold); r.code != 0 {
		t.Fatalf("approve: %s", r.stderr)
	}
	text, _, _, _ = call(t, cl, "stash", map[string]any{"item": "silver"})
	if silver := pendingID(text); silver == gold {
		t.Fatalf("a changed argument reused approval %s", gold)
	}
	text, isErr, _, _ := call(t, cl, "stash", map[string]any{"item": "gold"})
	if isErr || strings.TrimSpace(text) != `["stash","gold"]` {
		t.Fatalf("the approved arguments: %q (isError %v), want the command to run", text, isErr)
	}

	text, _, _, _ = call(t, cl, "stash", map[string]any{"item": "bronze"})
	bronze := pendingID(text)
	if r := approvalsCLI(t, d, "approve", bronze); r.code != 0 {
		t.Fatalf("approve: %s", r.stderr)
	}
	waitState(t, d, bronze, "expired")
	text, isErr, _, _ = call(t, cl, "stash", map[string]any{"item": "bronze"})
	if want := "DENIED: approval " + bronze + " expired"; !isErr || !strings.HasPrefix(text, want) {
		t.Errorf("call after the approval expired: %q, want %q", text, want)
	}
	if r := approvalsCLI(t, d, "approve", bronze); r.code == 0 || !strings.Contains(r.stderr, "expired") {
		t.Errorf("approving an expired request: exit %d %s", r.code, r.stderr)
	}

	runs := map[string]int{}
	for _, ev := range auditEvents(t, filepath.Join(dir, "audit.jsonl")) {
		if ev.Exit != nil {
			runs[strings.Join(ev.Argv, " ")]++
		}
	}
	if len(runs) != 1 || runs[argvEcho+" stash gold"] != 1 {
		t.Errorf("commands run = %v, want only the approved gold stash, once", runs)
	}
}

// waitState polls the admin API until approval id reaches state.
func waitState(t *testing.T, d *daemon, id, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", d.base+"/admin/approvals/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ State string }
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r.State == state {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("approval %s never became %s", id, state)
}

// TestApprovalRules: a rule approves a cautious write that matches its
// constraints on the spot, recorded as approved by the rule; a write
// outside the constraints, and a strict call a rule names, still wait.
func TestApprovalRules(t *testing.T) {
	t.Parallel()
	d, dir := approvalsDaemon(t, "100ms", "10m")
	notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)
	vault := mcpHTTP(t, d.base+"/mcp/vault", writerToken)

	text, isErr, _, _ := call(t, notes, "append", map[string]any{"text": "buy milk"})
	if isErr || strings.TrimSpace(text) != `["append","buy milk"]` {
		t.Errorf("rule-approved cautious write: %q (isError %v), want it to run", text, isErr)
	}
	text, isErr, _, _ = call(t, notes, "append", map[string]any{"text": "a text longer than twenty characters"})
	if !isErr || !strings.HasPrefix(text, "DENIED: approval pending ") {
		t.Errorf("write outside the rule's constraints: %q, want approval pending", text)
	}
	text, isErr, _, _ = call(t, vault, "stash", map[string]any{"item": "gold"})
	if !isErr || !strings.HasPrefix(text, "DENIED: approval pending ") {
		t.Errorf("strict write named by a rule: %q, want approval pending (rules never apply to strict)", text)
	}
	var ruled int
	for _, ev := range auditEvents(t, filepath.Join(dir, "audit.jsonl")) {
		if _, by := approvalOf(ev); ev.Exit != nil {
			ruled++
			if by != "rule:1" || ev.Decision != "completed" || ev.Of == nil {
				t.Errorf("executed event: decision %s approval by %q, want the outcome (completed) of a call approved by rule:1", ev.Decision, by)
			}
		}
	}
	if ruled != 1 {
		t.Errorf("%d commands ran, want 1", ruled)
	}
}
