package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// toolDef is one tool of a pack surface as tools/list shows it.
type toolDef struct {
	name, description string
	// inputSchema and outputSchema are JSON documents (outputSchema
	// empty: none).
	inputSchema, outputSchema []byte
	readOnly                  bool
}

// appendToolDef appends d as an MCP Tool, with its members in the order
// mcp-go writes them (sorted): annotations (readOnlyHint, and
// destructiveHint its opposite), description, inputSchema, name,
// outputSchema. Strings are not HTML-escaped; the schemas are compacted.
func appendToolDef(b []byte, d toolDef) []byte {
	b = append(b, `{"annotations":{"readOnlyHint":`...)
	b = strconv.AppendBool(b, d.readOnly)
	b = append(b, `,"destructiveHint":`...)
	b = strconv.AppendBool(b, !d.readOnly)
	b = append(b, '}')
	if d.description != "" {
		b = append(b, `,"description":`...)
		b = appendJSONString(b, d.description)
	}
	b = append(b, `,"inputSchema":`...)
	b = appendSchema(b, d.inputSchema)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, d.name)
	if len(d.outputSchema) > 0 {
		b = append(b, `,"outputSchema":`...)
		b = appendSchema(b, d.outputSchema)
	}
	return append(b, '}')
}

// appendSchema appends a JSON Schema compacted; none is an object schema
// (MCP requires inputSchema to be one).
func appendSchema(b []byte, schema []byte) []byte {
	if len(schema) == 0 {
		return append(b, `{"type":"object"}`...)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, schema) != nil {
		return append(b, schema...) // compiled by grantcheck: valid JSON
	}
	return append(b, buf.Bytes()...)
}

// toolDefinition is the MCP tool an agent is shown for a command: the
// member name unchanged, the schema narrowed by its constraints, hints from
// effects, and an object outputSchema when results carry structuredContent.
func toolDefinition(v grantcheck.ToolView) toolDef {
	d := toolDef{name: v.Name, description: v.Description, inputSchema: v.InputSchema, readOnly: v.Effects == workspace.EffectRead}
	if v.StructuredOutput {
		d.outputSchema = []byte(packs.OutputSchema)
	}
	return d
}

// jobToolDefinitions are the definitions of the three job tools.
func jobToolDefinitions() []toolDef {
	const jobID = `"job_id":{"description":"The job id.","maxLength":64,"type":"string"}`
	logs := `{"properties":{` + jobID +
		`,"limit":{"description":"Most bytes to return (default ` + strconv.Itoa(packs.DefaultLogPage) + `).","maximum":` + strconv.Itoa(packs.MaxLogPage) + `,"minimum":1,"type":"number"}` +
		`,"offset":{"description":"Byte offset to read from (default 0).","minimum":0,"type":"number"}` +
		`,"stream":{"description":"stdout (default) or stderr.","enum":[` + string(jsonString(string(packs.Stdout))) + `,` + string(jsonString(string(packs.Stderr))) + `],"type":"string"}` +
		`},"required":["job_id"],"type":"object"}`
	return []toolDef{
		{name: jobStatusTool, readOnly: true,
			description: "Show one of your background jobs on this endpoint (state: running, succeeded, failed, cancelled or stopped; exit status, duration, output sizes), or all of them when job_id is omitted.",
			inputSchema: []byte(`{"properties":{"job_id":{"description":"The job id returned when the job was started.","maxLength":64,"type":"string"}},"required":[],"type":"object"}`)},
		{name: jobLogsTool, readOnly: true,
			description: "Read a page of a background job's output, from offset (0 for the start). Pass the next_offset it reports to read on; done: true means the job has ended and everything was read.",
			inputSchema: []byte(logs)},
		{name: jobCancelTool, readOnly: false,
			description: "Stop one of your running background jobs: its whole process group is terminated. Returns its final status.",
			inputSchema: []byte(`{"properties":{` + jobID + `},"required":["job_id"],"type":"object"}`)},
	}
}

// packToolList encodes the tools/list result of a pack surface: the
// granted commands under their own names (those whose definition is
// pinned, when a lock is in force), then the job tools, in one order by
// name (a list is the same bytes every time).
func packToolList(rev *revision, s *surface, v *agentView) []byte {
	defs := make([]toolDef, 0, len(v.tools)+3)
	for _, t := range v.tools {
		if ok, _ := rev.pinned(s.pack.ID, t.Name, rev.packPins[s.pack.ID][t.Name]); !ok {
			continue
		}
		defs = append(defs, toolDefinition(t))
	}
	if v.jobs {
		defs = append(defs, jobToolDefinitions()...)
	}
	slices.SortFunc(defs, func(a, b toolDef) int { return strings.Compare(a.name, b.name) })
	b := []byte(`{"tools":[`)
	for i, d := range defs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendToolDef(b, d)
	}
	return append(b, "]}"...)
}
