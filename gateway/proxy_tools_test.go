package gateway

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/grantcheck"
)

func TestParseTool(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"name":"echo","description":"a <b> & c","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	e, ok := parseTool(raw, nil)
	if !ok || e.info.Name != "echo" || e.info.Description != "a <b> & c" || e.info.ReadOnlyHint == nil || !*e.info.ReadOnlyHint || e.digest == "" || e.headers != nil {
		t.Fatalf("parseTool = %+v, %v", e, ok)
	}
	if string(e.raw) != string(raw) {
		t.Errorf("raw %s, want the server's bytes", e.raw)
	}
	prev := e
	prev.digest = "sha256:lent"
	if again, _ := parseTool(raw, &prev); again.digest != "sha256:lent" {
		t.Errorf("the same bytes again: digest %q, want the previous one lent", again.digest)
	}
	for _, bad := range []string{`{"description":"no name"}`, `[]`, `{"name":""}`} {
		if _, ok := parseTool(json.RawMessage(bad), nil); ok {
			t.Errorf("parseTool(%s) ok", bad)
		}
	}
	hdr := json.RawMessage(`{"name":"route","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}`)
	if e, ok := parseTool(hdr, nil); !ok || e.headers == nil {
		t.Errorf("a tool mirroring an argument into a header: headers %v", e.headers)
	}
}

func TestSameTool(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	e, _ := parseToolInfo(json.RawMessage(`{"name":"x","description":"d","inputSchema":{"type":"object"}}`))
	base := e.info
	if !sameTool(base, base) {
		t.Fatal("a tool differs from itself")
	}
	desc, schema, hinted, unhinted := base, base, base, base
	desc.Description = "other"
	schema.InputSchema = json.RawMessage(`{"type":"object","required":["a"]}`)
	hinted.ReadOnlyHint, unhinted.ReadOnlyHint = &yes, &no
	for _, pair := range [][2]int{{0, 1}, {0, 2}, {0, 3}, {3, 4}} {
		all := []any{base, desc, schema, hinted, unhinted}
		a, b := all[pair[0]], all[pair[1]]
		if sameTool(a.(grantcheck.ToolInfo), b.(grantcheck.ToolInfo)) {
			t.Errorf("%+v and %+v compare equal", a, b)
		}
	}
}

// TestSetServerTools: a full listing replaces what is known, a page is
// merged into it; the policy learns the tools (a grant on the server then
// covers them) only when something changed.
func TestSetServerTools(t *testing.T) {
	t.Parallel()
	g := openProxyGateway(t)
	ps := g.proxy.server("conf")
	raws := []json.RawMessage{
		json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`),
		json.RawMessage(`{"name":"pid","inputSchema":{"type":"object"}}`),
		json.RawMessage(`"not a tool"`),
		json.RawMessage(`{"name":"echo","description":"a duplicate is ignored"}`),
	}
	out := g.setServerTools(ps, raws, true)
	if len(out) != 4 || !out[0].ok || !out[1].ok || out[2].ok {
		t.Fatalf("entries %+v", out)
	}
	if names := g.view("tester", "conf").byName; len(names) != 2 {
		t.Fatalf("tester's view after the listing: %v", names)
	}
	rev := g.rev.Load()
	g.setServerTools(ps, raws[:2], false) // the same page again: nothing changed
	if g.rev.Load() != rev {
		t.Error("an unchanged page swapped in a new revision")
	}
	g.setServerTools(ps, []json.RawMessage{json.RawMessage(`{"name":"calls","inputSchema":{"type":"object"}}`)}, false)
	if names := g.view("tester", "conf").byName; len(names) != 3 {
		t.Fatalf("after a page: %v, want echo, pid and calls", names)
	}
	if ps.digestOf("calls") == "" || ps.digestOf("nope") != "" {
		t.Errorf("digests: calls %q, nope %q", ps.digestOf("calls"), ps.digestOf("nope"))
	}
	g.setServerTools(ps, raws[:1], true)
	if names := g.view("tester", "conf").byName; len(names) != 1 {
		t.Fatalf("after a full listing of echo alone: %v", names)
	}
	if ps.headerTool("echo") != nil {
		t.Error("echo mirrors no argument into a header")
	}
}
