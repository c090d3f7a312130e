package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/mcpwire"
)

// TestJobTools: job-status, job-logs and job-cancel answer with text and a
// structuredContent object (every value encodable), for the calling
// agent's own jobs on the surface only.
func TestJobTools(t *testing.T) {
	t.Parallel()
	g := openYAML(t, jobToolsWorkspace, nil)
	s := g.rev.Load().surfaces["work"]
	res := callPack(t, g, "a", "work", "bg", map[string]any{"n": "<out> & more"})
	id, _ := res.StructuredContent.(map[string]any)["job_id"].(string)
	call := func(agent, tool string, args map[string]any) map[string]any {
		t.Helper()
		b, handled := g.callJobTool(context.Background(), agent, s, g.view(agent, "work"), tool, args)
		if !handled {
			t.Fatalf("%s not handled for %s", tool, agent)
		}
		var r struct {
			IsError    bool
			Structured map[string]any `json:"structuredContent"`
			Content    []struct{ Text string }
		}
		if err := json.Unmarshal(b, &r); err != nil || len(r.Content) != 1 {
			t.Fatalf("%s: %s (%v)", tool, b, err)
		}
		if strings.Contains(r.Content[0].Text, "not JSON") {
			t.Fatalf("%s: a structured value that cannot be encoded: %s", tool, b)
		}
		if r.Structured == nil {
			r.Structured = map[string]any{}
		}
		r.Structured["isError"], r.Structured["text"] = r.IsError, r.Content[0].Text
		return r.Structured
	}
	waitForCond(t, 30*time.Second, "the job to end", func() bool {
		return call("a", jobStatusTool, map[string]any{"job_id": id})["state"] == "succeeded"
	})
	st := call("a", jobStatusTool, map[string]any{"job_id": id})
	if st["job_id"] != id || st["command"] != "bg" || st["exit"] != float64(0) || st["isError"] != false {
		t.Errorf("job-status %v", st)
	}
	if all := call("a", jobStatusTool, nil); len(all["jobs"].([]any)) != 1 {
		t.Errorf("job-status of all jobs: %v", all)
	}
	logs := call("a", jobLogsTool, map[string]any{"job_id": id, "limit": json.Number("100")})
	if logs["data"] != "<out> & more\n" || logs["done"] != true || !strings.Contains(logs["text"].(string), "<out> & more") {
		t.Errorf("job-logs %v", logs)
	}
	if c := call("a", jobCancelTool, map[string]any{"job_id": id}); c["state"] != "succeeded" {
		t.Errorf("job-cancel of an ended job: %v", c)
	}
	if c := call("a", jobCancelTool, map[string]any{"job_id": "job-nope"}); c["isError"] != true || !strings.HasPrefix(c["text"].(string), "no such job") {
		t.Errorf("job-cancel of an unknown job, past the pipeline: %v", c)
	}
	// Through the pipeline, the cancel of a job that is not the agent's
	// is refused and audited once.
	before := len(events(t, g))
	out, _ := g.callTool(context.Background(), "a", "work", json.RawMessage("7"), json.RawMessage(`{"name":"job-cancel","arguments":{"job_id":"job-nope"}}`), mcpwire.Client{}, nil, g.packExecutor("a", s))
	if !strings.Contains(string(out), `DENIED: no such job \"job-nope\" of this agent on work`) {
		t.Errorf("job-cancel of an unknown job: %s", out)
	}
	if n := len(events(t, g)) - before; n != 1 {
		t.Errorf("the refused cancel was audited %d times", n)
	}
	if _, handled := g.callJobTool(context.Background(), "a", s, g.view("a", "work"), "bg", nil); handled {
		t.Error("a command taken for a job tool")
	}
	if _, handled := g.callJobTool(context.Background(), "c", s, g.view("c", "work"), jobStatusTool, nil); handled {
		t.Error("the job tools answered an agent not shown them")
	}
}

func TestNumber(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    any
		want float64
	}{{json.Number("12"), 12}, {2.5, 2.5}, {"7", 0}, {nil, 0}, {json.Number("x"), 0}} {
		if got := number(c.v); got != c.want {
			t.Errorf("number(%#v) = %v", c.v, got)
		}
	}
}
