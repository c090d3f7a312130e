package e2e

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

var pendingID = regexp.MustCompile(`approval pending (ap-[0-9a-f]+)`)

// approvalID is the id of the approval an audit event records, or of the
// one it says is pending.
func approvalID(t *testing.T, ev auditEvent) string {
	t.Helper()
	var a struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(ev.Approval, &a); err == nil && a.ID != "" {
		return a.ID
	}
	if m := pendingID.FindStringSubmatch(ev.Reason); m != nil {
		return m[1]
	}
	t.Fatalf("event %d names no approval: %s", ev.Seq, ev.raw)
	return ""
}

// approve approves id from the CLI: on the workspace's shared store (as
// an operator does for a stdio instance), else through the daemon.
func (b *bench) approve(t *testing.T, p peer, id string) {
	t.Helper()
	r := toolgate(t, b.dir, b.env, "approvals", "-w", b.ws, "approve", id)
	if r.code == 0 {
		return
	}
	if strings.Contains(r.stderr, "no such approval request") {
		hp, isHTTP := p.(*httpPeer)
		if !isHTTP {
			// A stdio instance keeps its approvals in the workspace's shared
			// store (docs/deploy.md): the CLI must find them there.
			t.Fatalf("approvals approve %s: the stdio instance's approval is not in the shared store:\n%s", id, r.stderr)
		}
		base := hp.url[:strings.Index(hp.url, "/mcp/")]
		if r = toolgate(t, b.dir, b.env, "approvals", "--server", base, "approve", id); r.code == 0 {
			return
		}
	}
	t.Fatalf("approvals approve %s: exit %d\n%s%s", id, r.code, r.stdout, r.stderr)
}

// pending calls and expects the call to be held for approval (never run);
// it returns the approval's id.
func (b *bench) pending(t *testing.T, p peer, n *ids, surface, label, params string) string {
	t.Helper()
	a := b.call(t, p, n, surface, label, params)
	d := a.exact(t)
	if text, _ := a.reply.toolText(); d.Decision != "approval" || !strings.HasPrefix(text, "DENIED: approval pending") {
		t.Fatalf("%s: %s (%s), want it held for approval", label, d.Decision, text)
	}
	return approvalID(t, d)
}

// allowed calls and expects the call to run as decided.
func (b *bench) allowed(t *testing.T, p peer, n *ids, surface, label, params string) *attempt {
	t.Helper()
	a := b.call(t, p, n, surface, label, params)
	if d := a.exact(t); d.Decision != "allow" {
		t.Fatalf("%s: %s (%s), want it allowed", label, d.Decision, d.Reason)
	}
	return a
}

// denied calls and expects a refusal whose reason says want.
func (b *bench) denied(t *testing.T, p peer, n *ids, surface, label, params, want string) {
	t.Helper()
	a := b.call(t, p, n, surface, label, params)
	d := a.refused(t)
	if d.Decision != "deny" || !strings.Contains(d.Reason, want) {
		t.Errorf("%s: %s (%s), want a refusal saying %q", label, d.Decision, d.Reason, want)
	}
}

// TestExactnessApprovalBinding: an approval covers exactly the arguments
// approved — a case-variant "Arguments", a case-variant argument key or
// other arguments cannot ride on it — and numbers are decided, digested
// and forwarded as their literal text: an approval for 9007199254740992
// does not let 9007199254740993 through, and the server receives the
// digits decided. Over HTTP and stdio, to mcp-go and by-hand servers.
func TestExactnessApprovalBinding(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, c := range []struct{ transport, surface string }{
		{"http", "gostdio"}, {"http", "rawhttp"}, {"stdio", "gohttp"}, {"stdio", "rawstdio"},
	} {
		t.Run(c.transport+"/"+c.surface, func(t *testing.T) {
			p := b.peer(t, d, c.transport, c.surface, initPlain)
			var n ids
			s := c.surface

			// An approval for {"x":"approved"} (echo is a cautious write).
			b.approve(t, p, b.pending(t, p, &n, s, "echo approved", `{"name":"echo","arguments":{"x":"approved"}}`))
			for _, params := range []string{
				`{"name":"echo","arguments":{"x":"approved"},"Arguments":{"x":"other"}}`,
				`{"name":"echo","Arguments":{"x":"other"},"arguments":{"x":"approved"}}`,
				`{"name":"echo","arguments":{"x":"approved","X":"other"}}`,
				`{"name":"echo","arguments":{"X":"other","x":"approved"}}`,
				`{"name":"echo","arguments":{"x":"approved","x":"other"}}`,
			} {
				b.denied(t, p, &n, s, "approval reuse "+params, params, "malformed tools/call")
			}
			b.pending(t, p, &n, s, "other arguments", `{"name":"echo","arguments":{"x":"other"}}`)
			// The same arguments written differently are the same call.
			b.allowed(t, p, &n, s, "approved call reordered", `{ "arguments" : { "x" : "approved" } , "name" : "echo" }`)
			b.pending(t, p, &n, s, "approval used up", `{"name":"echo","arguments":{"x":"approved"}}`)

			// Numbers beyond float64's integers.
			b.approve(t, p, b.pending(t, p, &n, s, "echo 2^53", `{"name":"echo","arguments":{"n":9007199254740992}}`))
			b.pending(t, p, &n, s, "echo 2^53+1 on the approval of 2^53", `{"name":"echo","arguments":{"n":9007199254740993}}`)
			b.pending(t, p, &n, s, "echo 2^53 written 9007199254740992.0", `{"name":"echo","arguments":{"n":9007199254740992.0}}`)
			b.pending(t, p, &n, s, "echo 2^53 written 9.007199254740992e15", `{"name":"echo","arguments":{"n":9.007199254740992e15}}`)
			ran := b.allowed(t, p, &n, s, "echo 2^53 approved", `{"name":"echo","arguments":{"n":9007199254740992}}`)
			wantLiteral(t, ran, `"n":9007199254740992`)

			// count is strict with maximum 9007199254740992.
			for _, lit := range []string{
				"9007199254740993", "9.007199254740993e15", "9007199254740992.5", "90071992547409921e-1",
				"0." + strings.Repeat("0", 2000) + "9007199254740993e2016", "1e400",
			} {
				b.denied(t, p, &n, s, "count n="+short(lit), `{"name":"count","arguments":{"n":`+lit+`}}`, "")
			}
			b.approve(t, p, b.pending(t, p, &n, s, "count 2^53", `{"name":"count","arguments":{"n":9007199254740992}}`))
			b.pending(t, p, &n, s, "count 2^53-1 on the approval of 2^53", `{"name":"count","arguments":{"n":9007199254740991}}`)
			ran = b.allowed(t, p, &n, s, "count 2^53 approved", `{"name":"count","arguments":{"n":9007199254740992}}`)
			wantLiteral(t, ran, `"n":9007199254740992`)
			if ran.execs[0].Bound != nil && !bytes.Contains(ran.execs[0].Bound, []byte(`"n":9007199254740992`)) {
				t.Errorf("the Go server bound n as %s, want the literal 9007199254740992", ran.execs[0].Bound)
			}
		})
	}
}

// wantLiteral checks that the server received the text lit, byte for
// byte, in the tools/call and in what it ran.
func wantLiteral(t *testing.T, a *attempt, lit string) {
	t.Helper()
	if len(a.wire) != 1 || !bytes.Contains(a.wire[0], []byte(lit)) {
		t.Errorf("%s: the server received %q, want the literal %s", a.label, a.wire, lit)
	}
	if len(a.execs) != 1 || !bytes.Contains(a.execs[0].Args, []byte(lit)) {
		t.Errorf("%s: the server ran with %q, want the literal %s", a.label, a.execs, lit)
	}
}

func short(s string) string {
	if len(s) > 24 {
		return s[:12] + "…" + s[len(s)-10:]
	}
	return s
}
