package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestHeldTaskRefusedAfterReload: a 2026-07-28 client's held call becomes
// a task; while it waits, a reload narrows the agent's grant to
// enum: [harmless]; the operator approves; the task completes with the
// refusal naming the reload (its result is the DENIED tool result), the
// call never ran, and the refusal is audited with the approval.
func TestHeldTaskRefusedAfterReload(t *testing.T) {
	t.Parallel()
	d, ws, dir, original := heldDaemon(t, "60s")
	url := d.base + "/mcp/vault"
	m, _ := modernRequest(t, url, writerToken, "tools/call", "stash", map[string]any{"name": "stash", "arguments": map[string]any{"item": "gold"}}, tasksCaps)
	task := resultOf(t, m)
	id, _ := task["taskId"].(string)
	msg, _ := task["statusMessage"].(string)
	approval := approvalIDPattern.FindString(msg)
	if task["resultType"] != "task" || id == "" || approval == "" {
		t.Fatalf("held call: %v, want a task waiting on an approval", task)
	}
	narrowed := strings.Replace(original, "  - id: writer\n    token: {env: WRITER_TOKEN}\n    grants: [tool:vault:stash]\n",
		"  - id: writer\n    token: {env: WRITER_TOKEN}\n    grants: [{op: tool:vault:stash, param_constraints: {item: {enum: [harmless]}}}]\n", 1)
	reloadTo(t, d, ws, narrowed)
	if r := approvalsCLI(t, d, "approve", approval); r.code != 0 {
		t.Fatalf("approve: exit %d: %s", r.code, r.stderr)
	}
	var done map[string]any
	waitFor(t, 20*time.Second, "the task to end", func() bool {
		m, _ := modernRequest(t, url, writerToken, "tasks/get", id, map[string]any{"taskId": id}, tasksCaps)
		done = resultOf(t, m)
		return done["status"] != "working"
	})
	res, _ := done["result"].(map[string]any)
	content, _ := res["content"].([]any)
	var text string
	if len(content) > 0 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	want := "DENIED: the workspace was reloaded while the call waited for approval " + approval
	if done["status"] != "completed" || res["isError"] != true || !strings.HasPrefix(text, want) || !strings.Contains(text, "harmless") {
		t.Fatalf("the task after the reload and the approval: %v, want its result to start %q", done, want)
	}
	if n := stashRuns(t, dir); n != 0 {
		t.Fatalf("%d stash calls ran", n)
	}
	var audited bool
	for _, ev := range readAudit(t, dir+"/audit.jsonl") {
		if ev.Action == "command:call:vault:stash" && ev.Decision == "deny" && heldApprovalID(ev.Approval) == approval && "DENIED: "+ev.Reason == text {
			audited = true
		}
	}
	if !audited {
		t.Fatal("the task's refusal is not audited with its approval and reason")
	}
}
