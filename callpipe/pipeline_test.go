package callpipe

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/redact"
)

const testWorkspace = `version: 1
gateway:
  approvals:
    rules:
      - {agent: bot, capability: "tool:notes:append", param_constraints: {text: {max_length: 10}}}
command_packs:
  - id: notes
    permission: cautious
    commands:
      - id: read
        argv: [cat, "{file}"]
        inputs: {type: object, properties: {file: {type: string}, n: {type: integer}}, required: [file]}
        effects: read
      - id: append
        argv: [echo, "{text}"]
        inputs: {type: object, properties: {text: {type: string}}, required: [text]}
        effects: write
  - id: vault
    permission: strict
    commands:
      - id: stash
        argv: [echo, "{item}"]
        inputs: {type: object, properties: {item: {type: string}}, required: [item]}
        effects: write
agents:
  - id: bot
    grants:
      - tool:notes:append
      - tool:vault:stash
      - op: tool:notes:read
        param_constraints: {file: {enum: [a.txt, b.txt]}}
`

// harness is a pipeline over a real policy and a real audit log.
type harness struct {
	pipe      *Pipeline
	broker    *approvals.Broker
	auditPath string
	snap      *Snapshot
}

func newHarness(t *testing.T, yaml string, wait time.Duration, sink Appender) *harness {
	t.Helper()
	dir := t.TempDir()
	ws, policy := compileWorkspace(t, dir, yaml)
	rules, err := approvals.CompileRules(policy, ws)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{auditPath: filepath.Join(dir, "audit.jsonl")}
	if sink == nil {
		log, err := audit.Open(h.auditPath, audit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { log.Close() })
		sink = log
	}
	journal := NewJournal(sink)
	h.broker = approvals.New(approvals.Options{OnDecision: func(r approvals.Request) { _ = journal.Append(ApprovalEvent(r, testRedactor())) }})
	t.Cleanup(h.broker.Close)
	h.snap = &Snapshot{Policy: policy, Rules: rules, Revision: ws.Revision, Wait: wait, Elicitation: true}
	h.pipe = New(Options{Snapshot: func() *Snapshot { return h.snap }, Approvals: h.broker, Journal: journal, Redactor: testRedactor()})
	return h
}

// testRedactor treats "s3cret" as the one credential, named t.
func testRedactor() *redact.Redactor { return redact.New(map[string]string{"t": "s3cret"}) }

// fakeExec records what it was asked to run; before running it checks
// that the call's decision is already in the audit (write-ahead).
type fakeExec struct {
	t          *testing.T
	auditPath  string
	prepareErr error
	result     string
	outcome    Outcome

	mu       sync.Mutex
	ran      []*Call
	discards int
}

func (x *fakeExec) Prepare(_ context.Context, c *Call) (Run, error) {
	if x.prepareErr != nil {
		return nil, x.prepareErr
	}
	return &fakeRun{x: x, c: c}, nil
}

type fakeRun struct {
	x *fakeExec
	c *Call
}

func (r *fakeRun) Preview() []string { return []string{"echo", r.c.Name} }

func (x *fakeExec) counts() (n, d int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.ran), x.discards
}

func (a *fakeAsker) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}
func (r *fakeRun) Discard() {
	r.x.mu.Lock()
	r.x.discards++
	r.x.mu.Unlock()
}

func (r *fakeRun) Execute(_ context.Context, decision audit.Event) Outcome {
	if r.x.auditPath != "" {
		// An approval's own event is written outside the broker's lock,
		// so it may land after the decision: look the decision up by seq.
		evs := readEvents(r.x.t, r.x.auditPath)
		recorded := false
		for _, ev := range evs {
			if ev.Seq == decision.Seq && ev.Decision == "allow" && ev.Of == nil {
				recorded = true
			}
		}
		if !recorded {
			r.x.t.Errorf("executing before the decision event (seq %d) is recorded; audit has %d events", decision.Seq, len(evs))
		}
	}
	r.x.mu.Lock()
	r.x.ran = append(r.x.ran, r.c)
	r.x.mu.Unlock()
	out := r.x.outcome
	if out.Result == nil && out.RPCError == nil {
		text := r.x.result
		if text == "" {
			text = "ok"
		}
		out.Result = TextResult(text)
	}
	return out
}

func readEvents(t *testing.T, path string) []audit.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// firstPending polls the broker (a condition with a deadline) until a
// call waits for approval, and returns that request.
func firstPending(t *testing.T, h *harness) approvals.Request {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p := h.broker.Pending(); len(p) > 0 {
			return p[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no call is waiting for approval")
		}
		time.Sleep(time.Millisecond)
	}
}

func mustCall(t *testing.T, params string) *Call {
	t.Helper()
	c, err := ParseCall([]byte(params))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func resultText(t *testing.T, r Result) (string, bool) {
	t.Helper()
	if r.RPCError != nil && r.JSON == nil {
		var e struct{ Message string }
		if err := json.Unmarshal(r.RPCError, &e); err != nil {
			t.Fatalf("rpc error %s: %v", r.RPCError, err)
		}
		return strings.TrimPrefix(e.Message, "Invalid params: "), true
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(r.JSON, &res); err != nil {
		t.Fatalf("result %s: %v", r.JSON, err)
	}
	if len(res.Content) == 0 {
		return "", res.IsError
	}
	return res.Content[0].Text, res.IsError
}

func TestPipelineAllowWritesAheadThenOutcome(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, time.Second, nil)
	x := &fakeExec{t: t, auditPath: h.auditPath, result: "contents"}
	exit := 0
	x.outcome = Outcome{Exit: &exit, Argv: []string{"cat", "s3cret"}}
	res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, TraceID: "abc",
		Call: mustCall(t, `{"name":"read","arguments":{"file":"a.txt"}}`)})
	if text, isErr := resultText(t, res); isErr || text != "contents" || res.Denied {
		t.Fatalf("result %q isError %v", text, isErr)
	}
	evs := readEvents(t, h.auditPath)
	if len(evs) != 2 {
		t.Fatalf("%d events, want decision + outcome", len(evs))
	}
	d, o := evs[0], evs[1]
	if d.Decision != "allow" || d.Of != nil || d.Action != "command:call:notes:read" || d.Revision == "" || d.TraceID != "abc" || d.Payload.Effects != "read" {
		t.Errorf("decision event %+v", d)
	}
	if o.Decision != OutcomeCompleted || o.Of == nil || *o.Of != d.Seq || o.Exit == nil || o.DurationMS == nil || o.ArgsSHA256 != d.ArgsSHA256 {
		t.Errorf("outcome event %+v", o)
	}
	if strings.Contains(strings.Join(o.Argv, " "), "s3cret") || strings.Join(d.Argv, " ") != "echo read" {
		t.Errorf("argv not redacted or previewed: decision %v outcome %v", d.Argv, o.Argv)
	}
}

func TestPipelineRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, agent, surface, params string
		parseErr                     error
		prepareErr                   error
		want                         string
	}{
		{"unknown agent", "nobody", "notes", `{"name":"read","arguments":{"file":"a.txt"}}`, nil, nil, `DENIED: unknown agent "nobody"`},
		{"ungranted tool", "bot", "notes", `{"name":"delete","arguments":{}}`, nil, nil, `DENIED: unknown tool "notes:delete"`},
		{"unknown surface", "bot", "nope", `{"name":"read","arguments":{}}`, nil, nil, `DENIED: unknown tool "nope:read"`},
		{"schema", "bot", "notes", `{"name":"read","arguments":{"file":1}}`, nil, nil, "DENIED: arguments do not match the input schema"},
		{"case variant of a declared parameter", "bot", "notes", `{"name":"read","arguments":{"FILE":"/etc/shadow"}}`, nil, nil, "differs only in case from the declared parameter"},
		{"constraint", "bot", "notes", `{"name":"read","arguments":{"file":"s3cret.txt"}}`, nil, nil, "DENIED: parameter \"file\": \"[REDACTED:t].txt\" is not one of"},
		{"malformed", "bot", "notes", "", errors.New("params.name must be a string"), nil, "DENIED: malformed tools/call: params.name must be a string"},
		{"prepare fails", "bot", "notes", `{"name":"read","arguments":{"file":"a.txt"}}`, nil, errors.New("parameter \"file\": s3cret starts with -"), "DENIED: parameter \"file\": [REDACTED:t] starts with -"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, testWorkspace, time.Second, nil)
			x := &fakeExec{t: t, prepareErr: c.prepareErr}
			req := Request{Agent: c.agent, Provider: Command, Surface: c.surface, Exec: x, ParseErr: c.parseErr, Name: "read"}
			if c.parseErr == nil {
				req.Call = mustCall(t, c.params)
			}
			res := h.pipe.Call(context.Background(), req)
			text, isErr := resultText(t, res)
			if !isErr || !res.Denied || !strings.HasPrefix(text, "DENIED: ") || !strings.Contains(text, strings.TrimPrefix(c.want, "DENIED: ")) {
				t.Fatalf("result %q, want %q", text, c.want)
			}
			if ran(x) != 0 {
				t.Fatal("a refused call ran")
			}
			evs := readEvents(t, h.auditPath)
			if len(evs) != 1 || evs[0].Decision != "deny" {
				t.Fatalf("events %+v, want one deny", evs)
			}
			if strings.Contains(evs[0].Reason, "s3cret") {
				t.Fatalf("a credential reached the audit reason: %q", evs[0].Reason)
			}
		})
	}
}

func TestPipelineApprovalByRule(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, time.Second, nil)
	x := &fakeExec{t: t, auditPath: h.auditPath}
	res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x,
		Call: mustCall(t, `{"name":"append","arguments":{"text":"short"}}`)})
	if _, isErr := resultText(t, res); isErr || ran(x) != 1 {
		t.Fatalf("rule-approved call: %s", res.JSON)
	}
	evs := readEvents(t, h.auditPath)
	if len(evs) != 2 || !strings.Contains(evs[0].Reason, "approved by rule:1") || evs[0].Approval == nil {
		t.Fatalf("events %+v", evs)
	}
}

// fakeAsker answers elicitations and counts progress.
type fakeAsker struct {
	answer Answer
	err    error

	mu       sync.Mutex
	progress int
	asked    []string
}

func (a *fakeAsker) Progress(context.Context, float64, float64, string) bool {
	a.mu.Lock()
	a.progress++
	a.mu.Unlock()
	return true
}

func (a *fakeAsker) Elicit(_ context.Context, msg string) (Answer, error) {
	a.mu.Lock()
	a.asked = append(a.asked, msg)
	a.mu.Unlock()
	return a.answer, a.err
}

func TestPipelineElicitationOnlyForCautiousWrites(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, 5*time.Second, nil)
	// A cautious write outside the rule's bound: the user approves it.
	asker := &fakeAsker{answer: Approved}
	x := &fakeExec{t: t, auditPath: h.auditPath}
	res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Asker: asker,
		Call: mustCall(t, `{"name":"append","arguments":{"text":"a much longer text"}}`)})
	if text, isErr := resultText(t, res); isErr || ran(x) != 1 {
		t.Fatalf("elicited call: %q", text)
	}
	if len(asker.questions()) != 1 || !strings.Contains(asker.questions()[0], `agent "bot"`) {
		t.Fatalf("asked %q", asker.questions())
	}
	// A strict write: the caller's own user is never asked.
	strictAsker := &fakeAsker{answer: Approved}
	h.snap.Wait = 100 * time.Millisecond
	res = h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x, Asker: strictAsker,
		Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)})
	text, isErr := resultText(t, res)
	if !isErr || !strings.Contains(text, "approval pending") || len(strictAsker.questions()) != 0 {
		t.Fatalf("strict call: %q, asked %q", text, strictAsker.questions())
	}
	if discards(x) != 1 || ran(x) != 1 {
		t.Fatalf("the held strict call was run or not released: ran %d discards %d", ran(x), discards(x))
	}
}

func TestPipelineOperatorApproves(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, 10*time.Second, nil)
	x := &fakeExec{t: t, auditPath: h.auditPath}
	asker := &fakeAsker{}
	done := make(chan Result, 1)
	call := mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)
	go func() {
		done <- h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x, Asker: asker, Call: call})
	}()
	p := firstPending(t, h)
	if !strings.Contains(string(p.Arguments), "gold") || strings.Join(p.Argv, " ") != "echo stash" {
		t.Fatalf("approver is shown %s %v", p.Arguments, p.Argv)
	}
	if _, err := h.broker.Approve(p.ID, approvals.ByOperator); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if text, isErr := resultText(t, res); isErr || ran(x) != 1 {
		t.Fatalf("approved call: %q", text)
	}
	// The same call again needs a new approval; denied this time.
	go func() {
		done <- h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x, Call: call})
	}()
	if _, err := h.broker.Deny(firstPending(t, h).ID, approvals.ByOperator, "not s3cret enough"); err != nil {
		t.Fatal(err)
	}
	text, isErr := resultText(t, <-done)
	if !isErr || !strings.Contains(text, "denied by operator: not [REDACTED:t] enough") {
		t.Fatalf("denied call: %q", text)
	}
	var decided []string
	for _, ev := range readEvents(t, h.auditPath) {
		decided = append(decided, ev.Decision)
	}
	// An approver's event and the woken call's own are appended by two
	// goroutines woken by the same decision: either may come first. What
	// is fixed: each once, and the call's outcome after its decision.
	got := strings.Join(decided, ",")
	sorted := append([]string(nil), decided...)
	slices.Sort(sorted)
	if strings.Join(sorted, ",") != "allow,approved,completed,denied,deny" || strings.Index(got, "allow") > strings.Index(got, "completed") {
		t.Fatalf("audit decisions %s", got)
	}
}

func TestPipelineCancelledWait(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, 30*time.Second, nil)
	x := &fakeExec{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		done <- h.pipe.Call(ctx, Request{Agent: "bot", Provider: Command, Surface: "vault", Exec: x,
			Call: mustCall(t, `{"name":"stash","arguments":{"item":"gold"}}`)})
	}()
	firstPending(t, h)
	cancel()
	select {
	case res := <-done:
		if text, _ := resultText(t, res); !strings.Contains(text, "the client stopped waiting") {
			t.Fatalf("cancelled wait: %q", text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled client did not end the approval wait")
	}
}

// flakySink fails appends while failing is set.
type flakySink struct {
	mu      sync.Mutex
	failing bool
	events  []*audit.Event
}

func (f *flakySink) Append(ev *audit.Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing {
		return errors.New("disk full")
	}
	ev.Seq = int64(len(f.events) + 1)
	f.events = append(f.events, ev)
	return nil
}

func TestPipelineFailsClosedOnAudit(t *testing.T) {
	t.Parallel()
	sink := &flakySink{failing: true}
	h := newHarness(t, testWorkspace, time.Second, sink)
	x := &fakeExec{t: t}
	call := mustCall(t, `{"name":"read","arguments":{"file":"a.txt"}}`)
	for i := range 2 {
		res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Call: call})
		if text, isErr := resultText(t, res); !isErr || !strings.Contains(text, "audit log") {
			t.Fatalf("call %d with a failing audit: %q", i, text)
		}
	}
	if ran(x) != 0 {
		t.Fatal("a call ran although its decision could not be recorded")
	}
	if h.pipe.Journal().Health().OK || h.pipe.Journal().Failing() == "" {
		t.Fatal("journal health does not show the failure")
	}
	sink.mu.Lock()
	sink.failing = false
	sink.mu.Unlock()
	// The first call after recovery is refused by the gate (its refusal is
	// the append that proves the audit works again); the next one runs.
	res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Call: call})
	if text, _ := resultText(t, res); !strings.Contains(text, "the audit log is failing") {
		t.Fatalf("first call after recovery: %q", text)
	}
	res = h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Call: call})
	if _, isErr := resultText(t, res); isErr || ran(x) != 1 {
		t.Fatalf("second call after recovery: %s", res.JSON)
	}
	if h := h.pipe.Journal().Health(); !h.OK || h.Appended != 3 {
		t.Fatalf("health %+v", h)
	}
}

func TestPipelineOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		outcome Outcome
		check   func(t *testing.T, res Result, ev audit.Event)
	}{
		{"rpc error passes through, redacted", Outcome{RPCError: []byte(`{"code":-1,"message":"bad s3cret"}`), Error: "server said s3cret"}, func(t *testing.T, res Result, ev audit.Event) {
			if string(res.RPCError) != `{"code":-1,"message":"bad [REDACTED:t]"}` || res.JSON != nil {
				t.Errorf("rpc error %s json %s", res.RPCError, res.JSON)
			}
			if ev.Decision != OutcomeFailed || ev.Error != "server said [REDACTED:t]" {
				t.Errorf("outcome %+v", ev)
			}
		}},
		{"result redacted", Outcome{Result: TextResult("token s3cret"), Note: "job j1"}, func(t *testing.T, res Result, ev audit.Event) {
			if strings.Contains(string(res.JSON), "s3cret") {
				t.Errorf("result %s", res.JSON)
			}
			if !strings.HasSuffix(ev.Reason, "; job j1") {
				t.Errorf("reason %q", ev.Reason)
			}
		}},
		{"redaction breaking JSON withholds the result", Outcome{Result: []byte(`{"content":[{"type":"text","text":"\u0022s3cret"}]}`)}, func(t *testing.T, res Result, _ audit.Event) {
			if !json.Valid(res.JSON) {
				t.Errorf("invalid JSON sent: %s", res.JSON)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, testWorkspace, time.Second, nil)
			x := &fakeExec{t: t, outcome: c.outcome}
			res := h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: MCP, Surface: "notes", Exec: x,
				Call: mustCall(t, `{"name":"read","arguments":{"file":"a.txt"}}`)})
			evs := readEvents(t, h.auditPath)
			if len(evs) != 2 || evs[0].Action != "mcp:call:notes:read" {
				t.Fatalf("events %+v", evs)
			}
			c.check(t, res, evs[1])
		})
	}
}

func TestEmptyOutcomeIsAnError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, time.Second, nil)
	res := h.pipe.finish(&audit.Event{Payload: audit.Payload{Container: "p", Member: "m"}}, Outcome{})
	if text, isErr := resultText(t, res); !isErr || !strings.Contains(text, "p:m produced no result") {
		t.Fatalf("%q", text)
	}
}

func TestNewEvent(t *testing.T) {
	t.Parallel()
	ev := NewEvent("a", Command, VerbJobCancel, "work", "")
	if ev.Action != "command:job-cancel:work" || ev.Payload.Provider != "command" || ev.Payload.Container != "work" {
		t.Fatalf("%+v", ev)
	}
	ev = NewEvent("a", MCP, VerbCall, "mem", "store")
	if ev.Action != "mcp:call:mem:store" || ev.Payload.Member != "store" {
		t.Fatalf("%+v", ev)
	}
}

func TestApprovalEvent(t *testing.T) {
	t.Parallel()
	for state, want := range map[approvals.State]string{
		approvals.Approved: "approval ap-1 approved by operator",
		approvals.Denied:   "approval ap-1 denied by operator: no [REDACTED:t]",
		approvals.Expired:  "approval ap-1 expired unused",
	} {
		ev := ApprovalEvent(approvals.Request{ID: "ap-1", State: state, DecidedBy: "operator", DenyReason: "no s3cret"}, testRedactor())
		if ev.Reason != want || ev.Decision != string(state) {
			t.Errorf("%s: %q", state, ev.Reason)
		}
	}
}

func TestResults(t *testing.T) {
	t.Parallel()
	var r struct {
		Content []struct{ Type, Text string }
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(ErrorResult(`a "quoted" <tag>`), &r); err != nil || !r.IsError || r.Content[0].Text != `a "quoted" <tag>` || r.Content[0].Type != "text" {
		t.Fatalf("%+v %v", r, err)
	}
	r.IsError = false
	if err := json.Unmarshal(TextResult("x\ny"), &r); err != nil || r.IsError || r.Content[0].Text != "x\ny" {
		t.Fatalf("%+v %v", r, err)
	}
}

func ran(x *fakeExec) int      { n, _ := x.counts(); return n }
func discards(x *fakeExec) int { _, n := x.counts(); return n }
