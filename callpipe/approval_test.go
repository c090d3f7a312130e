package callpipe

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
)

// fakeHolder plays a 2026-07-28 transport that can take a held call off
// the request: as a task (tasks) or by asking the caller's user (ask).
type fakeHolder struct {
	tasks, ask bool

	mu       sync.Mutex
	resume   func(ctx context.Context) Result
	state    string
	question string
}

func (h *fakeHolder) Task(_ context.Context, r approvals.Request, resume func(ctx context.Context) Result) ([]byte, bool) {
	if !h.tasks {
		return nil, false
	}
	h.mu.Lock()
	h.resume = resume
	h.mu.Unlock()
	return []byte(`{"resultType":"task","taskId":"` + r.ID + `"}`), true
}

func (h *fakeHolder) AskUser(_ context.Context, _ approvals.Request, question, state string) ([]byte, bool) {
	if !h.ask {
		return nil, false
	}
	h.mu.Lock()
	h.state, h.question = state, question
	h.mu.Unlock()
	return []byte(`{"resultType":"input_required"}`), true
}

// sealedHarness is a harness whose pipeline issues requestState.
func sealedHarness(t *testing.T) (*harness, *Sealer) {
	t.Helper()
	h := newHarness(t, testWorkspace, 200*time.Millisecond, nil)
	sealer, err := NewSealer(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	h.pipe = New(Options{Snapshot: func() *Snapshot { return h.snap }, Approvals: h.broker, Journal: h.pipe.Journal(), Redactor: testRedactor(), Sealer: sealer})
	return h, sealer
}

// TestHoldAsTask: a held call given to a client that takes tasks answers
// at once with the task; the call runs when it is resumed after the
// operator approved.
func TestHoldAsTask(t *testing.T) {
	t.Parallel()
	h, _ := sealedHarness(t)
	x := &fakeExec{t: t}
	holder := &fakeHolder{tasks: true}
	res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x, Hold: holder,
		Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)})
	if !strings.Contains(string(res.JSON), `"resultType":"task"`) || ran(x) != 0 || discards(x) != 1 {
		t.Fatalf("held: %s, ran %d", res.JSON, ran(x))
	}
	evs := readEvents(t, h.auditPath)
	if len(evs) != 1 || evs[0].Decision != "approval" || !strings.Contains(evs[0].Reason, "held as a task") {
		t.Fatalf("events %+v", evs)
	}
	p := h.broker.Pending()
	if len(p) != 1 {
		t.Fatalf("pending %+v", p)
	}
	if _, err := h.broker.Approve(p[0].ID, approvals.ByOperator); err != nil {
		t.Fatal(err)
	}
	holder.mu.Lock()
	resume := holder.resume
	holder.mu.Unlock()
	if text, isErr := resultText(t, resume(context.Background())); isErr || ran(x) != 1 {
		t.Fatalf("resumed task: %q", text)
	}
}

// TestHoldAskUser: a cautious write whose client cannot take a task is
// answered with a question to its own user, carrying a sealed state; the
// retry with the answer approves (once) or declines it. Every misuse of
// the state is refused and audited.
func TestHoldAskUser(t *testing.T) {
	t.Parallel()
	h, sealer := sealedHarness(t)
	x := &fakeExec{t: t}
	holder := &fakeHolder{ask: true}
	const args = `{"text":"a much longer text"}`
	first := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Hold: holder,
		Call: mustCall(t, `{"name":"append","arguments":`+args+`}`)})
	holder.mu.Lock()
	state, question := holder.state, holder.question
	holder.mu.Unlock()
	if string(first.JSON) != `{"resultType":"input_required"}` || !IsOwnState(state) || !strings.Contains(question, `agent "bot" asks to call command:call:notes:append`) {
		t.Fatalf("asked: %s state %q question %q", first.JSON, state, question)
	}
	retry := func(state, args string, answer string) (string, bool) {
		params := `{"name":"append","arguments":` + args + `,"requestState":` + string(mustJSON(state)) + `,"inputResponses":{"` + ApprovalInputKey + `":` + answer + `,"other":{"k":1}}}`
		return resultText(t, h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Hold: holder, Call: mustCall(t, params)}))
	}
	accept := `{"action":"accept","content":{"approve":true}}`
	refusals := []struct{ name, state, args, want string }{
		{"tampered", tamper(state), args, "not issued by this gateway or was altered"},
		{"other arguments", state, `{"text":"other arguments here"}`, "issued for another call"},
	}
	for _, r := range refusals {
		if text, isErr := retry(r.state, r.args, accept); !isErr || !strings.Contains(text, r.want) {
			t.Errorf("%s: %q", r.name, text)
		}
	}
	if text, isErr := retry(state, args, accept); isErr || ran(x) != 1 {
		t.Fatalf("approved retry: %q", text)
	}
	if x.ran[0].RequestState != "" || x.ran[0].InputResponses["other"] == nil || x.ran[0].InputResponses[ApprovalInputKey] != nil {
		t.Errorf("the run saw %+v: toolgate's own input must not go downstream, the server's must", x.ran[0])
	}
	if text, isErr := retry(state, args, accept); !isErr || !strings.Contains(text, "no longer pending") {
		t.Errorf("replayed state: %q", text)
	}
	// A declined question denies the call.
	h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Hold: holder,
		Call: mustCall(t, `{"name":"append","arguments":{"text":"declined text!"}}`)})
	holder.mu.Lock()
	state = holder.state
	holder.mu.Unlock()
	if text, isErr := retry(state, `{"text":"declined text!"}`, `{"action":"decline"}`); !isErr || !strings.Contains(text, "denied by elicitation") {
		t.Errorf("declined: %q", text)
	}
	// A state naming a strict call is refused: its user may never approve it.
	strict := mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)
	forged, _ := sealer.Seal(StateClaims{Agent: "bot", Action: "command:call:vault:stash", ArgsSHA256: strict.Digest, Revision: h.snap.Revision, ApprovalID: "x", Expires: time.Now().Add(time.Hour).Unix()})
	res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x,
		Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"},"requestState":`+string(mustJSON(forged))+`}`)})
	if text, _ := resultText(t, res); !strings.Contains(text, "may not be approved by the caller's own user") {
		t.Errorf("strict with state: %q", text)
	}
	// A state on a call that needs no approval now.
	res = h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x,
		Call: mustCall(t, `{"name":"read","arguments":{"file":"a.txt"},"requestState":`+string(mustJSON(state))+`}`)})
	if text, _ := resultText(t, res); !strings.Contains(text, "needs no approval now") {
		t.Errorf("state on a read: %q", text)
	}
	// A pipeline that issues no state refuses one.
	plain := newHarness(t, testWorkspace, 100*time.Millisecond, nil)
	res = plain.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x,
		Call: mustCall(t, `{"name":"append","arguments":`+args+`,"requestState":`+string(mustJSON(state))+`}`)})
	if text, _ := resultText(t, res); !strings.Contains(text, "this gateway issues none") {
		t.Errorf("no sealer: %q", text)
	}
	for _, ev := range readEvents(t, h.auditPath) {
		if ev.Decision == "" {
			t.Errorf("an event without a decision: %+v", ev)
		}
	}
}

// TestHoldDeclined: a holder that takes neither a task nor a question
// leaves the call to wait as in the session era.
func TestHoldDeclined(t *testing.T) {
	t.Parallel()
	h, _ := sealedHarness(t)
	x := &fakeExec{t: t}
	res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x, Hold: &fakeHolder{},
		Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)})
	if text, isErr := resultText(t, res); !isErr || !strings.Contains(text, "approval pending") {
		t.Errorf("%q", text)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// tamper alters one character in the middle of a requestState (every bit
// of a middle character is data, so the sealed bytes always change).
func tamper(state string) string {
	i := len(statePrefix) + (len(state)-len(statePrefix))/2
	c := byte('A')
	if state[i] == 'A' {
		c = 'B'
	}
	return state[:i] + string(c) + state[i+1:]
}
