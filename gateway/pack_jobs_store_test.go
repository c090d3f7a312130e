package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/callpipe"
)

const jobsStoreWorkspace = `version: 1
command_packs:
  - id: work
    permission: open
    commands:
      - id: bg
        argv: [echo, "{n}"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: write
        background: true
agents:
  - {id: a, grants: [tool:work:bg]}
  - {id: b, grants: [tool:work:bg]}
`

// TestJobRecordsShared: a background job started by one process is shown
// by job-status in another process of the same store (state and exit),
// whose job-logs and job-cancel say where the job lives; another agent
// sees nothing of it.
func TestJobRecordsShared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(jobsStoreWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() *Gateway {
		g, err := Open(context.Background(), path, Options{Getenv: os.Getenv})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	g1, g2 := open(), open()
	res := callPack(t, g1, "a", "work", "bg", map[string]any{"n": "hello"})
	id, _ := res.StructuredContent.(map[string]any)["job_id"].(string)
	if res.IsError || id == "" {
		t.Fatalf("start: %q", resultText(res))
	}
	s, _ := g2.surface("work")
	deadline := time.Now().Add(10 * time.Second)
	var st callpipe.ToolResult
	for {
		st = g2.jobStatus("a", s, id)
		if strings.Contains(st.Text, "succeeded") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st.IsError || !strings.Contains(st.Text, "succeeded") || !strings.Contains(st.Text, "another toolgate process") {
		t.Fatalf("job-status in the other process: %q", st.Text)
	}
	if all := g2.jobStatus("a", s, "").Text; !strings.Contains(all, id) {
		t.Fatalf("job-status list in the other process: %q", all)
	}
	if logs := g2.jobLogs("a", s, id, "", 0, 0); !logs.IsError || !strings.Contains(logs.Text, "another toolgate process") {
		t.Fatalf("job-logs in the other process: %q", logs.Text)
	}
	if c := g2.jobCancel(context.Background(), "a", s, id); !c.IsError || !strings.Contains(c.Text, "another toolgate process") {
		t.Fatalf("job-cancel in the other process: %q", c.Text)
	}
	for _, g := range []*Gateway{g1, g2} {
		if other := g.jobStatus("b", s, id); !other.IsError {
			t.Fatalf("agent b sees a's job: %q", other.Text)
		}
		if list := g.jobStatus("b", s, "").Text; strings.Contains(list, id) {
			t.Fatalf("agent b's list shows a's job: %q", list)
		}
	}
}
