package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// runExplain decides one call without executing it and prints every
// pipeline stage, so an operator can see why a call is allowed, needs
// approval or is refused. The decision is the gateway's own
// (callpipe.Snapshot.Decide over the snapshot `serve` would build): the
// proxied servers' tools as they list them now, or with --offline as
// toolgate.lock records them. Only what an executor checks (a pack's
// `requires`, the argv) is not.
func runExplain(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("explain", "explain [-w FILE] --agent ID --tool SURFACE:MEMBER [--args JSON] [--offline] [--scopes A,B] [--format text|json]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	agentID := fs.String("agent", "", "the agent making the call (required)")
	tool := fs.String("tool", "", "the tool, as SURFACE:MEMBER (tool:SURFACE:MEMBER and mcp__SURFACE__MEMBER work too) (required)")
	argsJSON := fs.String("args", "{}", "the call's arguments, as a JSON object")
	format := fs.String("format", "text", "output format: text or json")
	scopes := fs.String("scopes", "", "decide as for an access token (JWT) granting these scopes, comma-separated: the agent may use only its declared scopes the token also grants (\"\" with the flag given: a token granting none)")
	offline := fs.Bool("offline", false, "contact no server: take the proxied servers' tools from toolgate.lock")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(c.stderr, "toolgate explain: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q (the workspace is given with -w FILE)", fs.Arg(0))
	case *agentID == "" || *tool == "":
		return usage("--agent and --tool are required, for example --agent reader --tool json-tools:query")
	case *format != "text" && *format != "json":
		return usage("--format %q: use text or json", *format)
	}
	surface, member, err := parseToolRef(*tool)
	if err != nil {
		return usage("--tool: %v", err)
	}
	callArgs, err := decodeCallArgs(*argsJSON)
	if err != nil {
		return usage("--args: %v", err)
	}
	d, ok := c.loadDecider(ctx, "explain", c.workspacePath(*wsFlag), *offline)
	if !ok {
		return exitFail
	}
	ws := d.ws
	e := d.snap.Explain(*agentID, surface, member, callArgs)
	if fs.Changed("scopes") {
		e = d.snap.ExplainWithToken(*agentID, surface, member, callArgs, splitScopes(*scopes))
	}
	if *format == "json" {
		return writeExplainJSON(c, ws, *agentID, surface+":"+member, e)
	}
	writeExplainText(c.stdout, *agentID, surface+":"+member, e)
	return exitOK
}

// splitScopes reads --scopes a,b (spaces allowed around each).
func splitScopes(s string) []string {
	var out []string
	for _, sc := range strings.Split(s, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			out = append(out, sc)
		}
	}
	return out
}

// loadPolicy loads and compiles a workspace, printing every problem as
// FILE:LINE:COL: message.
func loadPolicy(c *cli, path string) (*workspace.Workspace, *grantcheck.Policy, bool) {
	ws, err := workspace.Load(path)
	if err == nil {
		var policy *grantcheck.Policy
		if policy, err = grantcheck.Compile(ws); err == nil {
			return ws, policy, true
		}
	}
	printLoadError(c, err)
	return nil, nil, false
}

// parseToolRef reads SURFACE:MEMBER, tool:SURFACE:MEMBER or the harness
// name mcp__SURFACE__MEMBER.
func parseToolRef(s string) (surface, member string, err error) {
	var capab grantcheck.Capability
	switch {
	case strings.HasPrefix(s, "tool:"):
		capab, err = grantcheck.Parse(s)
	case strings.HasPrefix(s, "mcp__"):
		capab, err = grantcheck.NormalizeEntry(s)
	default:
		surface, member, _ = strings.Cut(s, ":")
		if !grantcheck.ValidName(surface) || !grantcheck.ValidName(member) {
			return "", "", fmt.Errorf("%q is not SURFACE:MEMBER (letters, digits, '_', '.', '-'), for example json-tools:query", s)
		}
		return surface, member, nil
	}
	if err != nil {
		return "", "", err
	}
	if capab.Kind != grantcheck.KindTool {
		return "", "", fmt.Errorf("%q names more than one tool; name one, for example json-tools:query", s)
	}
	return capab.Surface, capab.Member, nil
}

// decodeCallArgs reads arguments as the gateway receives them from an MCP
// client: a JSON object whose numbers decode as float64.
func decodeCallArgs(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value; pass one object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be a JSON object such as {\"file\": \"a.json\"}, not %s", strings.TrimSpace(s))
	}
	return m, nil
}

func writeExplainText(w io.Writer, agentID, tool string, e callpipe.Explanation) {
	fmt.Fprintf(w, "agent %s calls %s\n", agentID, tool)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for i, s := range e.Steps {
		fmt.Fprintf(tw, "  %d %s\t%s\t%s\n", i+1, s.Stage, s.Status, s.Detail)
	}
	tw.Flush()
	fmt.Fprintf(w, "decision: %s\nreason:   %s\n", e.Final(), explainReason(e))
	var facts []string
	for _, f := range [][2]string{{"tier", string(e.Tier)}, {"effects", string(e.Effects)}, {"grant", e.Grant}} {
		if f[1] != "" {
			facts = append(facts, f[0]+": "+f[1])
		}
	}
	if len(facts) > 0 {
		fmt.Fprintf(w, "%s\n", strings.Join(facts, "   "))
	}
	if len(e.MissingScopes) > 0 {
		fmt.Fprintf(w, "missing scopes: %s\n", strings.Join(e.MissingScopes, ", "))
	}
}

// explainReason is the reason of the decision, with the rule that
// approves it as the gateway's audit records it.
func explainReason(e callpipe.Explanation) string {
	if e.ApprovedBy != "" {
		return e.Reason + "; approved by " + e.ApprovedBy
	}
	return e.Reason
}

// explainJSON is the --format json output; every field is always present.
type explainJSON struct {
	Workspace     string             `json:"workspace"`
	Revision      string             `json:"revision"`
	Agent         string             `json:"agent"`
	Tool          string             `json:"tool"`
	Decision      grantcheck.Outcome `json:"decision"`
	Reason        string             `json:"reason"`
	Stage         grantcheck.Stage   `json:"stage"`
	Tier          workspace.Tier     `json:"tier"`
	Effects       workspace.Effect   `json:"effects"`
	Grant         string             `json:"grant"`
	ApprovedBy    string             `json:"approved_by"`
	MissingScopes []string           `json:"missing_scopes"`
	Steps         []grantcheck.Step  `json:"steps"`
}

func writeExplainJSON(c *cli, ws *workspace.Workspace, agentID, tool string, e callpipe.Explanation) int {
	out := explainJSON{Workspace: ws.Path, Revision: ws.Revision, Agent: agentID, Tool: tool,
		Decision: e.Final(), Reason: explainReason(e), Stage: e.Stage, Tier: e.Tier, Effects: e.Effects,
		Grant: e.Grant, ApprovedBy: e.ApprovedBy, MissingScopes: e.MissingScopes, Steps: e.Steps}
	if out.MissingScopes == nil {
		out.MissingScopes = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(c.stderr, "toolgate explain: %v\n", err)
		return exitFail
	}
	c.stdout.Write(buf.Bytes())
	return exitOK
}
