package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// attempt is one message sent to toolgate and everything it caused: the
// reply, the audit events appended meanwhile, and what the downstream
// received and ran.
type attempt struct {
	label     string
	reply     reply
	decisions []auditEvent // decision events of calls
	outcomes  []auditEvent // outcome events (with of)
	others    []auditEvent // approvers' decisions, recoveries
	wire      [][]byte     // tools/call messages the server received
	cancels   [][]byte     // notifications/cancelled the server received
	execs     []recRecord  // tools the server ran
	hasExecs  bool         // the server records what it runs (not server-memory)
}

// send sends body to surface through p and collects the attempt. id is
// the raw id of the request ("" for a message without one).
func (b *bench) send(t *testing.T, p peer, surface, label, body, id string) *attempt {
	t.Helper()
	auditBefore := len(readAudit(t, b.audit))
	recBefore := len(readRecords(t, b.records[surface]))
	a := &attempt{label: label, hasExecs: surface != "memory"}
	a.reply = p.exchange(t, []byte(body), id)
	b.collect(t, a, auditBefore, recBefore, surface)
	return a
}

// collect fills a with what was appended to the audit and to surface's
// records after the given lengths.
func (b *bench) collect(t *testing.T, a *attempt, auditBefore, recBefore int, surface string) {
	t.Helper()
	for _, ev := range readAudit(t, b.audit)[auditBefore:] {
		switch {
		case ev.isCallDecision():
			a.decisions = append(a.decisions, ev)
		case ev.Of != nil:
			a.outcomes = append(a.outcomes, ev)
		default:
			a.others = append(a.others, ev)
		}
	}
	for _, r := range readRecords(t, b.records[surface])[recBefore:] {
		switch {
		case r.Wire != nil && wireMethod(r.Wire) == "tools/call":
			a.wire = append(a.wire, r.Wire)
		case r.Wire != nil && wireMethod(r.Wire) == "notifications/cancelled":
			a.cancels = append(a.cancels, r.Wire)
		case r.Exec != "":
			a.execs = append(a.execs, r)
		}
	}
}

// decision is the attempt's one decision event; it fails the test unless
// there is exactly one.
func (a *attempt) decision(t *testing.T) auditEvent {
	t.Helper()
	if len(a.decisions) != 1 {
		var lines []string
		for _, ev := range a.decisions {
			lines = append(lines, ev.raw)
		}
		t.Fatalf("%s: %d audit decision events, want exactly one:\n%s\nreply: %s", a.label, len(a.decisions), strings.Join(lines, "\n"), a.reply.last())
	}
	return a.decisions[0]
}

// exact checks the invariant of every attempt: exactly one decision
// event; if allowed, exactly one outcome event of it, and the server
// received exactly one tools/call whose name and arguments — read as a
// Go server reads them and with exact keys — are the ones decided, and
// ran exactly that; if not allowed, nothing reached the server. It
// returns the decision.
func (a *attempt) exact(t *testing.T) auditEvent {
	t.Helper()
	d := a.decision(t)
	if d.Decision != "allow" {
		if len(a.outcomes) != 0 {
			t.Errorf("%s: refused (%s) yet %d outcome events", a.label, d.Decision, len(a.outcomes))
		}
		if len(a.wire) != 0 || len(a.execs) != 0 {
			t.Errorf("%s: refused (%s: %s) yet the server received %q and ran %v", a.label, d.Decision, d.Reason, a.wire, a.execs)
		}
		return d
	}
	if len(a.outcomes) != 1 || *a.outcomes[0].Of != d.Seq {
		t.Errorf("%s: allowed (seq %d) with outcome events %v, want exactly one of it", a.label, d.Seq, a.outcomes)
	}
	if len(a.wire) != 1 {
		t.Fatalf("%s: allowed, and the server received %d tools/calls: %q", a.label, len(a.wire), a.wire)
	}
	for _, view := range []struct {
		how  string
		read func([]byte) (callView, error)
	}{{"encoding/json struct", goView}, {"exact keys", exactView}} {
		cv, err := view.read(a.wire[0])
		if err != nil {
			t.Errorf("%s: the server cannot read what it got (%s): %v\n%s", a.label, view.how, err, a.wire[0])
			continue
		}
		if cv.Name != d.Payload.Member || digestJSON(cv.Args) != d.ArgsSHA256 {
			t.Errorf("%s: decided %s with args %s, but the server read (%s) %s with %v\nwire: %s", a.label, d.Payload.Member, d.ArgsSHA256, view.how, cv.Name, cv.Args, a.wire[0])
		}
	}
	if !a.hasExecs {
		return d
	}
	if len(a.execs) == 0 && len(a.outcomes) == 1 && a.outcomes[0].Decision == "failed" {
		// The server could not read it (mcp-go and a number no float64
		// holds): nothing ran, which is not a different call.
		return d
	}
	if len(a.execs) != 1 {
		t.Fatalf("%s: allowed, and the server ran %d tools: %v", a.label, len(a.execs), a.execs)
	}
	ex := a.execs[0]
	args, err := decodeFirstWins(ex.Args)
	if err != nil {
		t.Fatalf("%s: exec args %q: %v", a.label, ex.Args, err)
	}
	if ex.Exec != d.Payload.Member || digestJSON(args) != d.ArgsSHA256 {
		t.Errorf("%s: decided %s %s, the server ran %s with %s", a.label, d.Payload.Member, d.ArgsSHA256, ex.Exec, ex.Args)
	}
	if ex.Bound != nil {
		// What a Go server bound into its struct must be the decided
		// values of the exact keys.
		var bound map[string]any
		dec := json.NewDecoder(strings.NewReader(string(ex.Bound)))
		dec.UseNumber()
		_ = dec.Decode(&bound)
		m, _ := args.(map[string]any)
		for k, v := range bound {
			want, ok := m[k]
			if !ok && (v == "" || v == json.Number("")) {
				continue
			}
			if !ok || digestJSON(want) != digestJSON(v) {
				t.Errorf("%s: the Go server bound %s=%v, but the decided arguments have %s=%v", a.label, k, v, k, want)
			}
		}
	}
	return d
}

// refused checks that the attempt was refused: the reply says so (a
// DENIED result, a JSON-RPC error, or an HTTP 4xx) and exact holds.
func (a *attempt) refused(t *testing.T) auditEvent {
	t.Helper()
	d := a.exact(t)
	if d.Decision == "allow" {
		t.Errorf("%s: allowed; want a refusal\nreply: %s", a.label, a.reply.last())
	}
	if text, isErr := a.reply.toolText(); !isErr && a.reply.status < 400 {
		t.Errorf("%s: the client was not told of a refusal: %q (HTTP %d)", a.label, text, a.reply.status)
	}
	return d
}
