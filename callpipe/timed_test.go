package callpipe

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestTimedRules: approve --for lets the next cautious call of the same
// tool under the same grant run without waiting (other arguments too),
// audited with the rule; deny --for refuses the identical call at once,
// without opening a request.
func TestTimedRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, 50*time.Millisecond, nil)
	x := &fakeExec{t: t, auditPath: h.auditPath}
	call := func(args string) Result {
		return h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x,
			Call: mustCall(t, `{"name":"append","arguments":`+args+`}`)})
	}
	held := call(`{"text":"longer than ten"}`)
	if !held.Denied || len(h.broker.Pending()) != 1 {
		t.Fatalf("first call not held: %s", held.JSON)
	}
	r, err := h.broker.ApproveFor(context.Background(), h.broker.Pending()[0].ID, "operator:alice", time.Minute)
	if err != nil || r.Rule == nil {
		t.Fatalf("approve --for: %v", err)
	}
	if text, isErr := resultText(t, call(`{"text":"another long text"}`)); isErr || ran(x) != 1 {
		t.Fatalf("covered call: %q ran %d", text, ran(x))
	}
	evs := readEvents(t, h.auditPath)
	last := evs[len(evs)-2] // the decision, before its outcome
	if last.Decision != "allow" || !strings.Contains(last.Reason, "approved by operator:alice") || !strings.Contains(string(last.Approval), r.Rule.ID) {
		t.Fatalf("decision event %+v", last)
	}
	if len(h.broker.Pending()) != 0 {
		t.Fatal("a covered call opened a request")
	}

	// deny --for on the strict vault: the identical call is refused at once.
	stash := func() Result {
		return h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x,
			Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)})
	}
	stash()
	p := h.broker.Pending()
	if len(p) != 1 {
		t.Fatalf("pending %+v", p)
	}
	if _, err := h.broker.ApproveFor(context.Background(), p[0].ID, "operator:alice", time.Minute); err == nil {
		t.Fatal("approve --for accepted on a strict call")
	}
	if _, err := h.broker.DenyFor(context.Background(), p[0].ID, "operator:bob", "not s3cret enough", time.Minute); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		res := stash()
		text, _ := resultText(t, res)
		if !res.Denied || !strings.Contains(text, "denied by operator:bob until") || strings.Contains(text, "s3cret") {
			t.Fatalf("call %d after deny --for: %q", i, text)
		}
	}
	if n := len(h.broker.Pending()); n != 0 {
		t.Fatalf("a call refused by deny --for opened %d request(s)", n)
	}
}

// TestAuditArguments: with AuditArguments the decision event carries the
// arguments, redacted; without, the digest alone.
func TestAuditArguments(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		h := newHarness(t, testWorkspace, 50*time.Millisecond, nil)
		h.snap.AuditArguments = on
		x := &fakeExec{t: t, auditPath: h.auditPath}
		h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x,
			Call: mustCall(t, `{"name":"append","arguments":{"text":"s3cret"}}`)})
		evs := readEvents(t, h.auditPath)
		got := string(evs[0].Arguments)
		switch {
		case !on && got != "":
			t.Errorf("off: arguments recorded: %s", got)
		case on && (!strings.Contains(got, `"text"`) || strings.Contains(got, "s3cret")):
			t.Errorf("redacted: arguments %s", got)
		}
	}
}
