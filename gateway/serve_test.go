package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestServeStdioRefuses: a stdio instance for an agent that is not
// declared, or that holds nothing on the surface, does not start; the
// second answer is the same for a surface that does not exist.
func TestServeStdioRefuses(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	cases := []struct{ agent, surface, want string }{
		{"mallory", "json-tools", `agent "mallory" is not declared`},
		{"reader", "nope", `holds no tool on surface "nope"`},
	}
	for _, c := range cases {
		err := g.ServeStdio(context.Background(), c.agent, c.surface, strings.NewReader(""), &strings.Builder{})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), g.ws.Path) {
			t.Errorf("%s on %s: %v", c.agent, c.surface, err)
		}
	}
	if _, ok := g.serveOptions(context.Background(), "reader", "json-tools"); !ok {
		t.Error("serveOptions refuses a surface the agent holds")
	}
}

// TestRefusedCall: a call the transport refused before the pipeline could
// read it is one refused, audited decision.
func TestRefusedCall(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	g.refusedCall("reader", "command", "json-tools")(context.Background(), errors.New("Mcp-Name header disagrees with the body"))
	evs := events(t, g)
	if len(evs) != 1 || evs[0].Decision != "deny" || evs[0].Action != "command:call:json-tools:?" || !strings.Contains(evs[0].Reason, "Mcp-Name header") {
		t.Errorf("audit %+v", evs)
	}
}
