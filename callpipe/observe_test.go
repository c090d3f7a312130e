package callpipe

import (
	"context"
	"sync"
	"testing"
	"time"
)

// recordingObserver keeps every CallDone it is given, with the context's
// marker value, so a test sees the call's own context reached it.
type recordingObserver struct {
	mu    sync.Mutex
	calls []CallStats
	ctxOK []bool
}

type markerKey struct{}

func (o *recordingObserver) CallDone(ctx context.Context, c CallStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, c)
	o.ctxOK = append(o.ctxOK, ctx.Value(markerKey{}) == "call")
}

func TestObserverSeesEveryCallOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, params string
		exec         *fakeExec
		sinkFails    bool
		wantDecision string
		wantFailed   bool
	}{
		{"allowed and completed", `{"name":"read","arguments":{"file":"a.txt"}}`, &fakeExec{}, false, "allow", false},
		{"allowed, the run failed", `{"name":"read","arguments":{"file":"a.txt"}}`, &fakeExec{outcome: Outcome{Error: "exit 1 s3cret"}}, false, "allow", true},
		{"refused by the grant", `{"name":"read","arguments":{"file":"/etc/passwd"}}`, &fakeExec{}, false, "deny", false},
		{"held for approval", `{"name":"stash","arguments":{"item":"x"}}`, &fakeExec{}, false, "approval", false},
		{"audit down", `{"name":"read","arguments":{"file":"a.txt"}}`, &fakeExec{}, true, "allow", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var sink Appender
			if c.sinkFails {
				sink = &flakySink{failing: true}
			}
			h := newHarness(t, testWorkspace, time.Millisecond, sink)
			obs := &recordingObserver{}
			h.pipe.observer = obs
			c.exec.t = t
			surface := "notes"
			if c.wantDecision == "approval" {
				surface = "vault"
			}
			ctx := context.WithValue(context.Background(), markerKey{}, "call")
			h.pipe.Call(ctx, Request{Agent: "bot", Provider: Command, Surface: surface, Exec: c.exec, Call: mustCall(t, c.params)})
			if len(obs.calls) != 1 {
				t.Fatalf("observer called %d times, want once: %+v", len(obs.calls), obs.calls)
			}
			got := obs.calls[0]
			if got.Decision != c.wantDecision || (got.Failed != "") != c.wantFailed || got.Surface != surface || got.Provider != Command || got.Duration <= 0 || !obs.ctxOK[0] {
				t.Errorf("observed %+v (ctx passed: %v), want decision %s failed %v", got, obs.ctxOK[0], c.wantDecision, c.wantFailed)
			}
			if got.Failed != "" && got.Failed == "exit 1 s3cret" {
				t.Errorf("failure not redacted: %q", got.Failed)
			}
		})
	}
}

func TestObserverOnMalformedCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testWorkspace, time.Second, nil)
	obs := &recordingObserver{}
	h.pipe.observer = obs
	h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: MCP, Surface: "notes", Name: "read", ParseErr: &CallError{Msg: "bad"}})
	if len(obs.calls) != 1 || obs.calls[0].Decision != "deny" || obs.calls[0].Tool != "read" || obs.calls[0].Provider != MCP {
		t.Fatalf("observed %+v", obs.calls)
	}
}
