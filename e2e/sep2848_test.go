package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// approvalCaps declares the tasks extension and SEP-2848's tool-approval
// extension, as a 2026-07-28 client that understands approvals does.
var approvalCaps = map[string]any{"extensions": map[string]any{
	"io.modelcontextprotocol/tasks":         map[string]any{},
	"io.modelcontextprotocol/tool-approval": map[string]any{},
}}

// metaOf reads a result's _meta member key.
func metaOf(r map[string]any, key string) any {
	m, _ := r["_meta"].(map[string]any)
	return m[key]
}

// pollTask polls tasks/get until the task leaves "working".
func pollTask(t *testing.T, url, token, id string) map[string]any {
	t.Helper()
	var done map[string]any
	waitFor(t, 20*time.Second, "task "+id+" to finish", func() bool {
		m, _ := modernRequest(t, url, token, "tasks/get", id, map[string]any{"taskId": id}, approvalCaps)
		done = resultOf(t, m)
		return done["status"] != "working"
	})
	return done
}

// TestToolApprovalExtension: SEP-2848 for a client that declares
// io.modelcontextprotocol/tool-approval. server/discover advertises it; a
// held call answers a working task carrying the "available" denial
// envelope (repeated on every poll); approved, the task completes with
// the call's result and disposition approved-executed; denied by the
// operator, it completes isError, denied-not-executed, with the
// "unavailable" envelope and a body saying the tool did not run; a call
// toolgate refuses outright carries the "unavailable" envelope. A client
// that does not declare the extension reads no envelope.
func TestToolApprovalExtension(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(modernWorkspace, "ARGVECHO", argvEcho))
	d := startDaemon(t, append(approvalsEnv, "OTHER_TOKEN="+otherToken), "-w", ws)
	url := d.base + "/mcp/vault"

	m, _ := modernRequest(t, url, writerToken, "server/discover", "", nil, approvalCaps)
	caps, _ := resultOf(t, m)["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if _, ok := ext["io.modelcontextprotocol/tool-approval"]; !ok {
		t.Errorf("server/discover capabilities %v: tool-approval not advertised", caps)
	}

	stash := func(item string) map[string]any {
		m, _ := modernRequest(t, url, writerToken, "tools/call", "stash", map[string]any{"name": "stash", "arguments": map[string]any{"item": item}}, approvalCaps)
		task := resultOf(t, m)
		env, _ := metaOf(task, "io.modelcontextprotocol/authorization").(map[string]any)
		if task["resultType"] != "task" || task["status"] != "working" || env["remediation"] != "available" ||
			metaOf(task, "io.modelcontextprotocol/model-immediate-response") == nil {
			t.Fatalf("held call: %v, want a working task with the available envelope and an immediate response", task)
		}
		return task
	}
	approvalOf := func(task map[string]any) string { return approvalIDPattern.FindString(task["statusMessage"].(string)) }
	admin := []string{"TOOLGATE_ADMIN_TOKEN=" + adminToken}

	// Approved: executed once, with its disposition.
	task := stash("gold")
	id := task["taskId"].(string)
	m, _ = modernRequest(t, url, writerToken, "tasks/get", id, map[string]any{"taskId": id}, approvalCaps)
	if env, _ := metaOf(resultOf(t, m), "io.modelcontextprotocol/authorization").(map[string]any); env["remediation"] != "available" {
		t.Errorf("tasks/get while waiting: %v, want the envelope repeated", m)
	}
	if r := toolgate(t, dir, admin, "approvals", "--server", d.base, "approve", approvalOf(task)); r.code != 0 {
		t.Fatalf("approve: %s%s", r.stdout, r.stderr)
	}
	done := pollTask(t, url, writerToken, id)
	res, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || metaOf(res, "io.modelcontextprotocol/tool-approval-disposition") != "approved-executed" ||
		res["isError"] == true || !strings.Contains(mustJSON(t, res["content"]), "gold") {
		t.Errorf("approved task: %v, want completed, approved-executed, with the output", done)
	}
	if metaOf(res, "io.modelcontextprotocol/authorization") != nil {
		t.Errorf("an executed call carries a denial envelope: %v", res)
	}

	// Denied by the operator: not run, and the body says so.
	task = stash("silver")
	id = task["taskId"].(string)
	if r := toolgate(t, dir, admin, "approvals", "--server", d.base, "deny", approvalOf(task)); r.code != 0 {
		t.Fatalf("deny: %s%s", r.stdout, r.stderr)
	}
	done = pollTask(t, url, writerToken, id)
	res, _ = done["result"].(map[string]any)
	env, _ := metaOf(res, "io.modelcontextprotocol/authorization").(map[string]any)
	if done["status"] != "completed" || res["isError"] != true || env["remediation"] != "unavailable" ||
		metaOf(res, "io.modelcontextprotocol/tool-approval-disposition") != "denied-not-executed" ||
		!strings.Contains(mustJSON(t, res["content"]), "did not run") {
		t.Errorf("denied task: %v, want completed isError, denied-not-executed, the unavailable envelope, a body saying it did not run", done)
	}

	// Refused outright (a tool of another surface the agent holds no grant
	// on): the unavailable envelope, for a declaring client only.
	m, _ = modernRequest(t, d.base+"/mcp/vault", otherToken, "tools/call", "stash", map[string]any{"name": "stash", "arguments": map[string]any{"item": 7}}, approvalCaps)
	r := resultOf(t, m)
	if env, _ := metaOf(r, "io.modelcontextprotocol/authorization").(map[string]any); r["isError"] != true || env["remediation"] != "unavailable" {
		t.Errorf("refused call: %v, want isError with the unavailable envelope", r)
	}
	m, _ = modernRequest(t, d.base+"/mcp/vault", otherToken, "tools/call", "stash", map[string]any{"name": "stash", "arguments": map[string]any{"item": 7}}, tasksCaps)
	if r := resultOf(t, m); r["isError"] != true || metaOf(r, "io.modelcontextprotocol/authorization") != nil {
		t.Errorf("refused call of a client without the extension: %v, want no envelope", r)
	}

	var executed int
	for _, ev := range auditEvents(t, dir+"/audit.jsonl") {
		if ev.Action == "command:call:vault:stash" && ev.Decision == "allow" {
			executed++
		}
	}
	if executed != 1 {
		t.Errorf("audit: %d allowed stash decisions, want 1 (gold only)", executed)
	}
}

// TestToolApprovalReloadNarrows: a reload narrows the grant while a call
// waits as a SEP-2848 task; approved afterwards, the call is decided again
// against the revision in force and refused: the task completes with the
// structured denial (denied-not-executed, the unavailable envelope), the
// reason names the reload, and the command never runs.
func TestToolApprovalReloadNarrows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(modernWorkspace, "ARGVECHO", argvEcho))
	env := append(approvalsEnv, "OTHER_TOKEN="+otherToken)
	d := startDaemon(t, env, "-w", ws)
	url := d.base + "/mcp/vault"

	m, _ := modernRequest(t, url, writerToken, "tools/call", "stash", map[string]any{"name": "stash", "arguments": map[string]any{"item": "gold"}}, approvalCaps)
	task := resultOf(t, m)
	id, _ := task["taskId"].(string)
	msg, _ := task["statusMessage"].(string)
	approval := approvalIDPattern.FindString(msg)
	if task["status"] != "working" || approval == "" {
		t.Fatalf("held call: %v", task)
	}

	// The grant narrowed to values the waiting call does not have.
	before := statusOf(t, d).Workspace.Revision
	b, err := os.ReadFile(ws)
	if err != nil {
		t.Fatal(err)
	}
	narrowed := strings.Replace(string(b), "grants: [tool:vault:stash, tool:notes:append]",
		"grants: [{op: \"tool:vault:stash\", param_constraints: {item: {enum: [harmless]}}}, tool:notes:append]", 1)
	if narrowed == string(b) {
		t.Fatal("the workspace did not change: the test would prove nothing")
	}
	writeFile(t, dir, "toolgate.yaml.new", narrowed)
	if err := os.Rename(dir+"/toolgate.yaml.new", ws); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the narrowed grant to load", func() bool {
		st := statusOf(t, d)
		if st.Reload.Error != "" {
			t.Fatalf("the narrowed workspace was refused: %s", st.Reload.Error)
		}
		return st.Workspace.Revision != before
	})

	if r := toolgate(t, dir, []string{"TOOLGATE_ADMIN_TOKEN=" + adminToken}, "approvals", "--server", d.base, "approve", approval); r.code != 0 {
		t.Fatalf("approve: %s%s", r.stdout, r.stderr)
	}
	done := pollTask(t, url, writerToken, id)
	res, _ := done["result"].(map[string]any)
	envl, _ := metaOf(res, "io.modelcontextprotocol/authorization").(map[string]any)
	if done["status"] != "completed" || res["isError"] != true || envl["remediation"] != "unavailable" ||
		metaOf(res, "io.modelcontextprotocol/tool-approval-disposition") != "denied-not-executed" {
		t.Fatalf("task approved after the grant was narrowed: %v, want a structured denial", done)
	}
	if text := mustJSON(t, res["content"]); !strings.Contains(text, "reload") || strings.Contains(text, `stash gold`) {
		t.Errorf("refusal body %s: want the reason to name the reload, and no output of the command", text)
	}
	for _, ev := range auditEvents(t, dir+"/audit.jsonl") {
		if ev.Action == "command:call:vault:stash" && ev.Exit != nil {
			t.Errorf("the command ran after the narrowing: %+v", ev)
		}
	}
}

// mustJSON renders v as JSON text, for matching inside a result.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
