package gateway

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// TestJobLifecycleAudit: a background command starts as a job (the call's
// outcome names it) and its end is audited as an event of its own that
// refers to the call's decision.
func TestJobLifecycleAudit(t *testing.T) {
	t.Parallel()
	g := openYAML(t, jobToolsWorkspace, nil)
	res := callPack(t, g, "a", "work", "bg", map[string]any{"n": "<x>"})
	id, _ := res.StructuredContent.(map[string]any)["job_id"].(string)
	if res.IsError || id == "" || !strings.Contains(resultText(res), "Started background job "+id) {
		t.Fatalf("start: %q", resultText(res))
	}
	var decision, end *audit.Event
	waitForCond(t, 30*time.Second, "the job's end to be audited", func() bool {
		decision, end = nil, nil
		for _, ev := range events(t, g) {
			switch {
			case ev.Action == "command:call:work:bg" && ev.Decision == "allow":
				decision = &ev
			case ev.Action == "command:job-end:work:bg":
				end = &ev
			}
		}
		return decision != nil && end != nil
	})
	if end.Decision != string(packs.JobSucceeded) || end.Of == nil || *end.Of != decision.Seq || end.ArgsSHA256 != decision.ArgsSHA256 || !strings.Contains(end.Reason, id) {
		t.Errorf("end %+v, decision %+v", end, decision)
	}
}

// TestHasJobTools: the job tools are shown to an agent holding a
// background command, unless the pack has a command named like one.
func TestHasJobTools(t *testing.T) {
	t.Parallel()
	g := openYAML(t, jobToolsWorkspace, nil)
	if !g.view("a", "work").jobs || g.view("c", "work").jobs {
		t.Fatal("job tools: a holds bg (background), c only say")
	}
	s := g.rev.Load().surfaces["work"]
	clash := &surface{pack: s.pack, commands: maps.Clone(s.commands)}
	clash.commands[jobLogsTool] = &workspace.Command{ID: jobLogsTool}
	if g.hasJobTools(clash, g.view("a", "work").tools) {
		t.Error("a pack with a command named job-logs gets the job tools")
	}
}
