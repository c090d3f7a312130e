package gateway

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// sameJSON reports whether a and b are the same JSON document.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestToolDefinitionIsMCPGos: a command's definition is the document
// mcp-go's Tool marshals to (the members it writes, in its order), but for
// <, > and & left as they are.
func TestToolDefinitionIsMCPGos(t *testing.T) {
	t.Parallel()
	for _, v := range []grantcheck.ToolView{
		{Name: "query", Description: "Run <filter> & print", InputSchema: json.RawMessage(`{ "type": "object", "properties": {"f": {"type": "string"}} }`), Effects: workspace.EffectRead},
		{Name: "edit", InputSchema: json.RawMessage(`{"type":"object"}`), Effects: workspace.EffectWrite, StructuredOutput: true},
	} {
		got := appendToolDef(nil, toolDefinition(v))
		m := mcp.NewToolWithRawSchema(v.Name, v.Description, v.InputSchema)
		if v.StructuredOutput {
			m.RawOutputSchema = json.RawMessage(packs.OutputSchema)
		}
		read := v.Effects == workspace.EffectRead
		destructive := !read
		m.Annotations = mcp.ToolAnnotation{ReadOnlyHint: &read, DestructiveHint: &destructive}
		want, _ := json.Marshal(m)
		unescaped := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(want))
		if string(got) != unescaped {
			t.Errorf("%s:\n got %s\nwant %s", v.Name, got, unescaped)
		}
	}
}

// TestJobToolDefinitions: the job tools are the tools mcp-go's builders
// made of them.
func TestJobToolDefinitions(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	jobID := mcp.WithString("job_id", mcp.Description("The job id returned when the job was started."), mcp.MaxLength(64))
	want := []mcp.Tool{
		mcp.NewTool(jobStatusTool,
			mcp.WithDescription("Show one of your background jobs on this endpoint (state: running, succeeded, failed, cancelled or stopped; exit status, duration, output sizes), or all of them when job_id is omitted."),
			jobID, mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: &yes, DestructiveHint: &no})),
		mcp.NewTool(jobLogsTool,
			mcp.WithDescription("Read a page of a background job's output, from offset (0 for the start). Pass the next_offset it reports to read on; done: true means the job has ended and everything was read."),
			mcp.WithString("job_id", mcp.Required(), mcp.Description("The job id."), mcp.MaxLength(64)),
			mcp.WithString("stream", mcp.Enum(string(packs.Stdout), string(packs.Stderr)), mcp.Description("stdout (default) or stderr.")),
			mcp.WithNumber("offset", mcp.Min(0), mcp.Description("Byte offset to read from (default 0).")),
			mcp.WithNumber("limit", mcp.Min(1), mcp.Max(packs.MaxLogPage), mcp.Description(fmt.Sprintf("Most bytes to return (default %d).", packs.DefaultLogPage))),
			mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: &yes, DestructiveHint: &no})),
		mcp.NewTool(jobCancelTool,
			mcp.WithDescription("Stop one of your running background jobs: its whole process group is terminated. Returns its final status."),
			mcp.WithString("job_id", mcp.Required(), mcp.Description("The job id."), mcp.MaxLength(64)),
			mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: &no, DestructiveHint: &yes})),
	}
	got := jobToolDefinitions()
	if len(got) != len(want) {
		t.Fatalf("%d job tools", len(got))
	}
	for i := range want {
		w, _ := json.Marshal(want[i])
		if g := appendToolDef(nil, got[i]); !sameJSON(t, g, w) {
			t.Errorf("%s:\n got %s\nwant %s", want[i].Name, g, w)
		}
	}
}

// TestPackToolList: the list is sorted by name, leaves out what the lock
// does not pin, and adds the job tools only to agents holding a
// background command.
func TestPackToolList(t *testing.T) {
	t.Parallel()
	g := openYAML(t, jobToolsWorkspace, nil)
	names := func(agent string) string {
		var l struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal(g.view(agent, "work").list, &l); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range l.Tools {
			out = append(out, tl.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names("a"); got != "bg,job-cancel,job-logs,job-status" {
		t.Errorf("a's list: %s", got)
	}
	if got := names("c"); got != "say" {
		t.Errorf("c's list: %s", got)
	}
	rev := g.rev.Load()
	if got := packToolList(rev, rev.surfaces["work"], &agentView{}); string(got) != `{"tools":[]}` {
		t.Errorf("an empty view: %s", got)
	}
}

func TestAppendSchema(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": `{"type":"object"}`, `{ "a" : [1, 2] }`: `{"a":[1,2]}`, `{"d":"<&>"}`: `{"d":"<&>"}`} {
		if got := string(appendSchema(nil, []byte(in))); got != want {
			t.Errorf("appendSchema(%q) = %s, want %s", in, got, want)
		}
	}
}
