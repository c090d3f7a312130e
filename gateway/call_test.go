package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestCallToolEntry: the one entry parses, checks the id and hands every
// call to the pipeline under the executor's provider — the same for a
// pack and a proxied surface. A call without an id or with params that do
// not parse is refused and audited, and never reaches the executor.
func TestCallToolEntry(t *testing.T) {
	t.Parallel()
	g := openYAML(t, pipelineWorkspace, nil)
	forwarded := 0
	// The forward function stands in for a relayed session here (relaying
	// is mcpproxy's, tested there and by the proxy tests below): every
	// case is one the entry or the pipeline must refuse before it.
	proxied := proxyExecutor{g: g, server: "conf", forward: func(context.Context, string, []byte) (json.RawMessage, json.RawMessage, error) {
		forwarded++
		return json.RawMessage(`{"content":[]}`), nil, nil
	}}
	pack := g.packExecutor("reader", g.rev.Load().surfaces["json-tools"])
	query := `{"name":"query","arguments":{"filter":".a","file":"d.json"}}`
	cases := []struct {
		name, surface, id, params string
		exec                      executor
		rpcErr                    string // in the JSON-RPC error, or "" for a result
		result                    string // in the result
		action, decision, reason  string // the call's audit event
	}{
		{"pack call", "json-tools", `7`, query, pack, "", `"text":"1\n"`, "command:call:json-tools:query", "allow", ""},
		{"pack notification", "json-tools", ``, query, pack, "without an id", "", "command:call:json-tools:query", "deny", "without an id"},
		{"pack id null", "json-tools", `null`, query, pack, "without an id", "", "command:call:json-tools:query", "deny", "without an id"},
		{"pack arguments not an object", "json-tools", `8`, `{"name":"query","arguments":[1]}`, pack, "Invalid params", "", "command:call:json-tools:query", "deny", "malformed tools/call"},
		{"pack params not JSON", "json-tools", `9`, `{"name":`, pack, "Invalid params", "", "command:call:json-tools:?", "deny", "malformed tools/call"},
		{"proxied notification", "conf", ``, `{"name":"echo","arguments":{}}`, proxied, "without an id", "", "mcp:call:conf:echo", "deny", "without an id"},
		{"proxied call not granted", "conf", `10`, `{"name":"echo","arguments":{}}`, proxied, "", "DENIED: ", "mcp:call:conf:echo", "deny", ""},
	}
	for _, c := range cases {
		before := len(events(t, g))
		var id json.RawMessage
		if c.id != "" {
			id = json.RawMessage(c.id)
		}
		res, rpcErr := g.callTool(context.Background(), "reader", c.surface, id, json.RawMessage(c.params), mcpwire.Client{}, nil, c.exec)
		switch {
		case c.rpcErr != "" && !strings.Contains(jsonrpc.ParseError(rpcErr).Message, c.rpcErr):
			t.Errorf("%s: error %s, want one saying %q", c.name, rpcErr, c.rpcErr)
		case c.rpcErr == "" && (rpcErr != nil || !strings.Contains(string(res), c.result)):
			t.Errorf("%s: result %s error %s, want a result holding %q", c.name, res, rpcErr, c.result)
		}
		evs := events(t, g)[before:]
		if len(evs) == 0 || evs[0].Action != c.action || evs[0].Decision != c.decision || !strings.Contains(evs[0].Reason, c.reason) {
			t.Errorf("%s: audit %+v, want %s %s (%q)", c.name, evs, c.action, c.decision, c.reason)
		}
	}
	if forwarded != 0 {
		t.Errorf("a refused call reached the server %d times", forwarded)
	}
}

const jobToolsWorkspace = `version: 1
command_packs:
  - id: work
    permission: open
    commands:
      - id: bg
        argv: [echo, "{n}"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: write
        background: true
      - id: say
        argv: [echo, "{n}"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: read
agents:
  - {id: a, grants: [tool:work:bg]}
  - {id: c, grants: [tool:work:say]}
`

// TestCallToolJobTools: the job tools pass the pipeline like any call: an
// agent shown them gets the job manager's answer with a decision and an
// outcome event; a call without an id, one naming another agent's job, and
// one by an agent not shown them are refused by the pipeline and audited.
func TestCallToolJobTools(t *testing.T) {
	t.Parallel()
	g := openYAML(t, jobToolsWorkspace, nil)
	s := g.rev.Load().surfaces["work"]
	call := func(agent, id, params string) (json.RawMessage, json.RawMessage, []string) {
		before := len(events(t, g))
		var rid json.RawMessage
		if id != "" {
			rid = json.RawMessage(id)
		}
		res, rpcErr := g.callTool(context.Background(), agent, "work", rid, json.RawMessage(params), mcpwire.Client{}, nil, g.packExecutor(agent, s))
		var decisions []string
		for _, ev := range events(t, g)[before:] {
			decisions = append(decisions, ev.Action+" "+ev.Decision)
		}
		return res, rpcErr, decisions
	}
	const status = `{"name":"job-status","arguments":{}}`
	if res, _, evs := call("a", "1", status); !strings.Contains(string(res), "no background jobs") ||
		strings.Join(evs, ",") != "command:call:work:job-status allow,command:call:work:job-status completed" {
		t.Errorf("job-status of an agent shown the job tools: %s, events %v; want the job manager's answer, decided and audited", res, evs)
	}
	if _, rpcErr, evs := call("a", "", status); rpcErr == nil || len(evs) != 1 {
		t.Errorf("job-status without an id: error %s, events %v; want a refusal by the pipeline", rpcErr, evs)
	}
	for _, params := range []string{
		`{"name":"job-logs","arguments":{"job_id":"job-of-someone-else"}}`,
		`{"name":"job-cancel","arguments":{}}`,
		`{"name":"job-logs","arguments":{"job_id":5}}`,
		`{"name":"job-cancel","arguments":{"job_id":["job-a"]}}`,
		`{"name":"job-status","arguments":{"job_id":"` + strings.Repeat("j", 70000) + `"}}`,
	} {
		if res, _, evs := call("a", "3", params); !strings.Contains(string(res), "DENIED: ") || len(res) > 1000 || len(evs) != 1 || !strings.HasSuffix(evs[0], " deny") {
			t.Errorf("%.200s: %.300s, events %v; want the pipeline's refusal, short", params, res, evs)
		}
	}
	if res, _, evs := call("c", "2", status); !strings.Contains(string(res), "DENIED: unknown tool") || len(evs) != 1 {
		t.Errorf("job-status of an agent without background commands: %s, events %v; want the pipeline's refusal", res, evs)
	}
}

func TestToolNameOf(t *testing.T) {
	t.Parallel()
	for params, want := range map[string]string{
		`{"name":"query"}`: "query", `{"name":""}`: "?", `{`: "?", `[]`: "?", `{"name":7}`: "?",
		`{"name":"` + strings.Repeat("x", 200) + `"}`: strings.Repeat("x", 128),
	} {
		if got := toolNameOf(json.RawMessage(params)); got != want {
			t.Errorf("toolNameOf(%.40s) = %q, want %q", params, got, want)
		}
	}
}
