package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// modernWorkspace has a strict write (held for an operator), a cautious
// write the caller's own user may approve (approvals.elicitation), and two
// agents.
const modernWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  admin_token: {env: TG_ADMIN_TOKEN}
  approvals: {wait: 1s, ttl: 10m, elicitation: true}
command_packs:
  - id: vault
    permission: strict
    commands:
      - id: stash
        argv: [ARGVECHO, stash, "{item}"]
        inputs: {type: object, properties: {item: {type: string}}, required: [item]}
        effects: write
  - id: notes
    permission: cautious
    commands:
      - id: append
        argv: [ARGVECHO, append, "{text}"]
        inputs: {type: object, properties: {text: {type: string}}, required: [text]}
        effects: write
agents:
  - id: writer
    token: {env: WRITER_TOKEN}
    grants: [tool:vault:stash, tool:notes:append]
  - id: other
    token: {env: OTHER_TOKEN}
    grants: [tool:vault:stash]
`

const otherToken = "other-secret-token"

// modernCall POSTs one 2026-07-28 request (headers mirrored from the body,
// as the protocol asks) and returns the JSON-RPC response (the last event
// of an SSE stream) and the HTTP status.
func modernRequest(t *testing.T, url, token, method, name string, params map[string]any, caps map[string]any) (map[string]any, int) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if caps == nil {
		caps = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "e2e", "version": "1"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
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
	raw, _ := io.ReadAll(resp.Body)
	last := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"id"`) {
				last = []byte(strings.TrimPrefix(line, "data: "))
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(last, &m); err != nil {
		t.Fatalf("%s: answer %q: %v", method, raw, err)
	}
	return m, resp.StatusCode
}

func resultOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", m)
	}
	return r
}

var tasksCaps = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}

// TestModernHeldCallBecomesATask: a 2026-07-28 client that declared the
// tasks extension calls a strict tool: it gets a task at once; the
// operator approves from the CLI; polling shows the task complete with
// the call's result. Another agent asking for the task gets the
// unknown-task answer, and every task operation is audited.
func TestModernHeldCallBecomesATask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(modernWorkspace, "ARGVECHO", argvEcho))
	env := append(approvalsEnv, "OTHER_TOKEN="+otherToken)
	d := startDaemon(t, env, "-w", ws)
	url := d.base + "/mcp/vault"

	m, status := modernRequest(t, url, writerToken, "tools/call", "stash", map[string]any{"name": "stash", "arguments": map[string]any{"item": "gold"}}, tasksCaps)
	task := resultOf(t, m)
	if status != 200 || task["resultType"] != "task" || task["status"] != "working" {
		t.Fatalf("held call: HTTP %d %v, want a working task", status, task)
	}
	id, _ := task["taskId"].(string)
	msg, _ := task["statusMessage"].(string)
	if !strings.HasPrefix(id, "tk-") || !strings.Contains(msg, "ap-") {
		t.Fatalf("task %v: want a tk- id and the approval it waits on", task)
	}
	approval := approvalIDPattern.FindString(msg)

	// Nobody else sees it, not even knowing its id.
	m, status = modernRequest(t, url, otherToken, "tasks/get", id, map[string]any{"taskId": id}, tasksCaps)
	if e, _ := m["error"].(map[string]any); status != 400 || e == nil || e["code"] != float64(-32602) {
		t.Errorf("another agent's tasks/get: HTTP %d %v, want -32602 task not found", status, m)
	}
	unknown := "tk-00000000000000000000000000000000"
	m, _ = modernRequest(t, url, writerToken, "tasks/get", unknown, map[string]any{"taskId": unknown}, tasksCaps)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
		t.Errorf("an unknown task: %v, want the same -32602", m)
	}

	if r := toolgate(t, dir, []string{"TOOLGATE_ADMIN_TOKEN=" + adminToken}, "approvals", "--server", d.base, "approve", approval); r.code != 0 {
		t.Fatalf("approve %s: %s%s", approval, r.stdout, r.stderr)
	}
	var done map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, _ = modernRequest(t, url, writerToken, "tasks/get", id, map[string]any{"taskId": id}, tasksCaps)
		done = resultOf(t, m)
		if done["status"] == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling, as the extension asks clients to
	}
	res, _ := done["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if done["status"] != "completed" || len(content) == 0 || !strings.Contains(content[0].(map[string]any)["text"].(string), `"gold"`) {
		t.Fatalf("task after approval: %v, want completed with the call's output", done)
	}

	var ops, allowed int
	for _, ev := range auditEvents(t, dir+"/audit.jsonl") {
		if strings.HasPrefix(ev.Action, "command:task:vault:") {
			ops++
		}
		if ev.Action == "command:call:vault:stash" && ev.Decision == "allow" {
			allowed++
		}
	}
	if ops < 3 || allowed != 1 { // another agent's get, the unknown id's, the polls
		t.Errorf("audit: %d task operations, %d allowed stash decisions; want every operation audited and the call run once", ops, allowed)
	}
}

// TestModernUserApprovesByInputRequired: without the tasks extension, a
// cautious write of a client that declared elicitation is answered
// input_required, asking its user; the retry with the user's yes and the
// sealed requestState runs the call. The same state again, a tampered
// one, or one for other arguments are refused. A strict call is never put
// to the caller's user.
func TestModernUserApprovesByInputRequired(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(modernWorkspace, "ARGVECHO", argvEcho))
	d := startDaemon(t, append(approvalsEnv, "OTHER_TOKEN="+otherToken), "-w", ws)
	elicit := map[string]any{"elicitation": map[string]any{}}
	call := func(url, name string, args map[string]any, extra map[string]any) map[string]any {
		p := map[string]any{"name": name, "arguments": args}
		for k, v := range extra {
			p[k] = v
		}
		m, _ := modernRequest(t, url, writerToken, "tools/call", name, p, elicit)
		return m
	}
	notes := d.base + "/mcp/notes"
	first := resultOf(t, call(notes, "append", map[string]any{"text": "hello"}, nil))
	state, _ := first["requestState"].(string)
	reqs, _ := first["inputRequests"].(map[string]any)
	if first["resultType"] != "input_required" || !strings.HasPrefix(state, "tg1.") || reqs["toolgate/approval"] == nil {
		t.Fatalf("cautious write: %v, want input_required asking the user, with toolgate's sealed state", first)
	}
	yes := map[string]any{"toolgate/approval": map[string]any{"action": "accept", "content": map[string]any{"approve": true}}}
	text := func(m map[string]any) string {
		if e, ok := m["error"].(map[string]any); ok {
			return e["message"].(string)
		}
		r := resultOf(t, m)
		c, _ := r["content"].([]any)
		if len(c) == 0 {
			return ""
		}
		return c[0].(map[string]any)["text"].(string)
	}
	// One character in the middle changed: every bit of it is data, so the
	// sealed bytes always change (the last characters hold unused bits).
	mid := len(state) / 2
	flip := byte('A')
	if state[mid] == 'A' {
		flip = 'B'
	}
	tampered := state[:mid] + string(flip) + state[mid+1:]
	if got := text(call(notes, "append", map[string]any{"text": "hello"}, map[string]any{"inputResponses": yes, "requestState": tampered})); !strings.Contains(got, "requestState refused") {
		t.Errorf("tampered state: %q, want refused", got)
	}
	if got := text(call(notes, "append", map[string]any{"text": "other words"}, map[string]any{"inputResponses": yes, "requestState": state})); !strings.Contains(got, "issued for another call") {
		t.Errorf("state for other arguments: %q, want refused", got)
	}
	if got := text(call(notes, "append", map[string]any{"text": "hello"}, map[string]any{"inputResponses": yes, "requestState": state})); strings.TrimSpace(got) != `["append","hello"]` {
		t.Fatalf("retry with the user's yes: %q, want the command's output", got)
	}
	if got := text(call(notes, "append", map[string]any{"text": "hello"}, map[string]any{"inputResponses": yes, "requestState": state})); !strings.Contains(got, "no longer pending") {
		t.Errorf("the same state again: %q, want a refused replay", got)
	}
	strict := resultOf(t, call(d.base+"/mcp/vault", "stash", map[string]any{"item": "gold"}, nil))
	if strict["resultType"] == "input_required" {
		t.Errorf("a strict call was put to the caller's own user: %v", strict)
	}
	var byUser int
	for _, ev := range auditEvents(t, dir+"/audit.jsonl") {
		if _, by := approvalOf(ev); ev.Action == "command:call:notes:append" && ev.Decision == "allow" && by == "elicitation" {
			byUser++
		}
	}
	if byUser != 1 {
		t.Errorf("%d calls ran approved by the user, want 1", byUser)
	}
}
