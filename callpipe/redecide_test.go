package callpipe

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// definedExec is a fakeExec that names its tools' definitions (Definer),
// which a test may change while a call waits.
type definedExec struct {
	*fakeExec
	mu  sync.Mutex
	def string
}

func (x *definedExec) Definition(string) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.def
}

func (x *definedExec) redefine(def string) {
	x.mu.Lock()
	x.def = def
	x.mu.Unlock()
}

// policyOf compiles a workspace for a snapshot swapped in mid-call.
func policyOf(t *testing.T, yaml string) *grantcheck.Policy {
	t.Helper()
	ws, err := workspace.Parse(t.TempDir()+"/toolgate.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := grantcheck.Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHeldCallDecidedAgain: a call waiting for approval is decided again,
// against the revision in force, when it is about to run. A reload that
// narrows its grant or removes its agent refuses it, naming the reload; a
// reload to a new generation refuses it even when the file's content is
// the one it was approved under (a reverted file revives nothing); a new
// listing under the same generation lets it run; a tool redefined during
// the wait does not run. Each refusal is audited as a deny with the
// approval it consumed.
func TestHeldCallDecidedAgain(t *testing.T) {
	t.Parallel()
	narrowed := strings.Replace(testWorkspace, "      - tool:vault:stash\n",
		"      - {op: tool:vault:stash, param_constraints: {item: {enum: [harmless]}}}\n", 1)
	removed := strings.Replace(testWorkspace, "  - id: bot\n", "  - id: other\n", 1)
	cases := []struct {
		name string
		// next is the snapshot in force when the approval lands (from
		// the one the call was decided under); redefine, when set, is the
		// tool's definition by then.
		next     func(t *testing.T, was *Snapshot) *Snapshot
		redefine string
		want     string // "" runs
	}{
		{name: "grant narrowed", want: "the workspace was reloaded while the call waited for approval ap-",
			next: func(t *testing.T, was *Snapshot) *Snapshot {
				s := *was
				s.Policy, s.Revision, s.Generation = policyOf(t, narrowed), "narrowed", was.Generation+1
				return &s
			}},
		{name: "agent removed", want: `and the revision in force refuses it: unknown agent "bot"`,
			next: func(t *testing.T, was *Snapshot) *Snapshot {
				s := *was
				s.Policy, s.Revision, s.Generation = policyOf(t, removed), "removed", was.Generation+1
				return &s
			}},
		{name: "reverted file, later generation", want: "an approval covers the call only under the revision it was given in",
			next: func(_ *testing.T, was *Snapshot) *Snapshot {
				s := *was
				s.Generation = was.Generation + 2
				return &s
			}},
		{name: "same generation, new listing", next: func(_ *testing.T, was *Snapshot) *Snapshot { s := *was; return &s }},
		{name: "definition changed", redefine: "sha256:two", want: "the definition of vault:stash changed while the call waited for approval ap-",
			next: func(_ *testing.T, was *Snapshot) *Snapshot { return was }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, testWorkspace, 10*time.Second, nil)
			h.snap.Generation = 1
			var cur atomic.Pointer[Snapshot]
			cur.Store(h.snap)
			h.pipe = New(Options{Snapshot: cur.Load, Approvals: h.broker, Journal: h.pipe.Journal(), Redactor: testRedactor()})
			x := &definedExec{fakeExec: &fakeExec{t: t, auditPath: h.auditPath}, def: "sha256:one"}
			done := make(chan Result, 1)
			go func() {
				done <- h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x,
					Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)})
			}()
			p := firstPending(t, h)
			if p.Generation != 1 || p.Definition != "sha256:one" {
				t.Fatalf("the approval binds generation %d, definition %q", p.Generation, p.Definition)
			}
			cur.Store(tc.next(t, h.snap))
			if tc.redefine != "" {
				x.redefine(tc.redefine)
			}
			if _, err := h.broker.Approve(p.ID, approvals.ByOperator); err != nil {
				t.Fatal(err)
			}
			text, isErr := resultText(t, <-done)
			if tc.want == "" {
				if isErr || ran(x.fakeExec) != 1 {
					t.Fatalf("approved call under the same generation: %q, ran %d", text, ran(x.fakeExec))
				}
				return
			}
			if !isErr || !strings.HasPrefix(text, DeniedPrefix) || !strings.Contains(text, tc.want) || ran(x.fakeExec) != 0 || discards(x.fakeExec) != 1 {
				t.Fatalf("approved after the change: %q (ran %d, discarded %d), want a refusal containing %q", text, ran(x.fakeExec), discards(x.fakeExec), tc.want)
			}
			var refused bool
			for _, ev := range readEvents(t, h.auditPath) {
				if ev.Decision == "deny" && approvalID(&ev) == p.ID && DeniedPrefix+ev.Reason == text {
					refused = true
				}
			}
			if !refused {
				t.Fatalf("no deny event with approval %s and reason %q: %+v", p.ID, text, readEvents(t, h.auditPath))
			}
		})
	}
}

// TestRequestStateBindsGeneration: a requestState issued under one
// generation opens under no other, even for the same file content (a
// reload and a revert in between): the retry is refused and nothing runs.
func TestRequestStateBindsGeneration(t *testing.T) {
	t.Parallel()
	h, _ := sealedHarness(t)
	h.snap.Generation = 4
	x := &fakeExec{t: t}
	holder := &fakeHolder{ask: true}
	const args = `{"text":"a much longer text"}`
	h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Hold: holder,
		Call: mustCall(t, `{"name":"append","arguments":`+args+`}`)})
	holder.mu.Lock()
	state := holder.state
	holder.mu.Unlock()
	if !IsOwnState(state) {
		t.Fatalf("no state issued: %q", state)
	}
	reverted := *h.snap
	reverted.Generation = 6
	h.snap = &reverted
	params := `{"name":"append","arguments":` + args + `,"requestState":` + string(mustJSON(state)) + `,"inputResponses":{"` + ApprovalInputKey + `":{"action":"accept","content":{"approve":true}}}}`
	text, isErr := resultText(t, h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Hold: holder, Call: mustCall(t, params)}))
	if !isErr || !strings.Contains(text, "requestState refused: the workspace was reloaded since it was issued (generation 4, now revision") || ran(x) != 0 {
		t.Fatalf("retry under a later generation: %q, ran %d", text, ran(x))
	}
}

// TestTaskResumedAfterReload: a task's resumed call waits for the approval
// the task names, under the revision it was held in, and is decided again
// when it is about to run: a reload between the hold and the run refuses
// it, naming the reload, rather than opening another request.
func TestTaskResumedAfterReload(t *testing.T) {
	t.Parallel()
	h, _ := sealedHarness(t)
	h.snap.Generation = 1
	var cur atomic.Pointer[Snapshot]
	cur.Store(h.snap)
	h.pipe = New(Options{Snapshot: cur.Load, Approvals: h.broker, Journal: h.pipe.Journal(), Redactor: testRedactor()})
	x := &fakeExec{t: t}
	holder := &fakeHolder{tasks: true}
	h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x, Hold: holder,
		Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)})
	p := firstPending(t, h)
	next := *h.snap
	next.Generation = 2
	cur.Store(&next)
	if _, err := h.broker.Approve(p.ID, approvals.ByOperator); err != nil {
		t.Fatal(err)
	}
	holder.mu.Lock()
	resume := holder.resume
	holder.mu.Unlock()
	text, isErr := resultText(t, resume(context.Background()))
	if !isErr || !strings.Contains(text, "waited for approval "+p.ID) || !strings.Contains(text, "generation 1 → revision") || ran(x) != 0 {
		t.Fatalf("resumed after a reload: %q, ran %d", text, ran(x))
	}
	if left := h.broker.Pending(); len(left) != 0 {
		t.Errorf("the resumed call opened another request: %+v", left)
	}
}
