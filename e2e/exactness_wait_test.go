package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Attacks 8 and 9 of the exactness suite: a proxied call held for
// approval reaches its caller like a pack call does (progress when the
// client asked for it; for a cautious write, where the workspace allows
// it and the client can be asked, an elicitation — never for a strict
// one), and a client that goes away takes its call with it: the approval
// wait ends, and a call already forwarded is cancelled downstream.

const initElicit = `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"attacker","version":"1"}}`

// asked records the server→client requests a peer answered.
type asked struct {
	mu      sync.Mutex
	methods []string
	texts   []string
	answer  string // accept | decline
}

func (a *asked) handle(method string, params json.RawMessage) json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.methods = append(a.methods, method)
	a.texts = append(a.texts, string(params))
	if a.answer == "accept" {
		return json.RawMessage(`{"action":"accept","content":{"approve":true}}`)
	}
	return json.RawMessage(`{"action":"decline"}`)
}

func (a *asked) reset(answer string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.methods, a.texts, a.answer = nil, nil, answer
}

func (a *asked) elicitations() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for i, m := range a.methods {
		if m == "elicitation/create" {
			out = append(out, a.texts[i])
		}
	}
	return out
}

func setAsker(p peer, a *asked) {
	switch x := p.(type) {
	case *httpPeer:
		x.onRequest = a.handle
	case *stdioPeer:
		x.onRequest = a.handle
	}
}

// progressFor returns the notifications/progress of token among msgs.
func progressFor(msgs []json.RawMessage, token string) []string {
	var out []string
	for _, m := range msgs {
		var n struct {
			Method string `json:"method"`
			Params struct {
				Token   json.RawMessage `json:"progressToken"`
				Message string          `json:"message"`
			} `json:"params"`
		}
		if json.Unmarshal(m, &n) == nil && n.Method == "notifications/progress" && string(n.Params.Token) == token {
			out = append(out, n.Params.Message)
		}
	}
	return out
}

// TestExactnessProxiedApprovalAsks: over HTTP and stdio, a proxied
// cautious write held for approval sends progress (the client's token)
// and asks the client's user; the answer decides, the call runs as
// decided or not at all. A strict call sends progress but never asks.
func TestExactnessProxiedApprovalAsks(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 20s\nttl: 10m\nelicitation: true")
	d := b.startDaemon(t)
	for _, c := range []struct{ transport, surface string }{{"http", "gostdio"}, {"http", "rawhttp"}, {"stdio", "rawstdio"}, {"stdio", "gohttp"}} {
		t.Run(c.transport+"/"+c.surface, func(t *testing.T) {
			p := b.peer(t, d, c.transport, c.surface, initElicit)
			user := &asked{}
			setAsker(p, user)
			var n ids
			s := c.surface

			user.reset("accept")
			a := b.call(t, p, &n, s, "cautious write, user accepts", `{"name":"echo","arguments":{"x":"yes"},"_meta":{"progressToken":"tok-yes"}}`)
			if dec := a.exact(t); dec.Decision != "allow" || !strings.Contains(string(dec.Approval), `"by":"elicitation"`) {
				t.Errorf("accepted by the user: %s %s (%s), want allowed by elicitation", dec.Decision, dec.Approval, dec.Reason)
			}
			if got := progressFor(a.reply.msgs, `"tok-yes"`); len(got) == 0 || !strings.Contains(got[0], "waiting for approval") {
				t.Errorf("no progress for the held call: %q", a.reply.msgs)
			}
			if e := user.elicitations(); len(e) != 1 || !strings.Contains(e[0], `\"x\":\"yes\"`) && !strings.Contains(e[0], `"x":"yes"`) {
				t.Errorf("elicitations = %q, want one naming the arguments", e)
			}

			user.reset("decline")
			a = b.call(t, p, &n, s, "cautious write, user declines", `{"name":"echo","arguments":{"x":"no"},"_meta":{"progressToken":7}}`)
			if dec := a.refused(t); dec.Decision != "deny" || !strings.Contains(dec.Reason, "declined") {
				t.Errorf("declined by the user: %s (%s), want a refusal", dec.Decision, dec.Reason)
			}
			if got := progressFor(a.reply.msgs, `7`); len(got) == 0 {
				t.Errorf("no progress for the held call (numeric token): %q", a.reply.msgs)
			}

			// Strict: progress, no question; an operator (or the client
			// leaving) ends the wait.
			user.reset("accept")
			id := n.next()
			body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"count","arguments":{"n":1},"_meta":{"progressToken":"tok-strict"}}}`
			auditBefore, recBefore := len(readAudit(t, b.audit)), len(readRecords(t, b.records[s]))
			r := startCall(t, p, body, id)
			msg := r.await(t, func(m json.RawMessage) bool { return len(progressFor([]json.RawMessage{m}, `"tok-strict"`)) > 0 })
			pid := approvalRef.FindString(string(msg))
			if pid == "" {
				t.Fatalf("the strict call's progress names no approval: %s", msg)
			}
			if hp, ok := p.(*httpPeer); ok {
				b.approve(t, hp, pid)
			} else {
				r.cancel(t) // a stdio instance's approval is its own until the shared store lands
			}
			r.done(t)
			a = &attempt{label: "strict write", hasExecs: true}
			b.collect(t, a, auditBefore, recBefore, s)
			if len(user.elicitations()) != 0 {
				t.Errorf("a strict call was put to the caller's own user: %q", user.elicitations())
			}
			if dec := a.exact(t); c.transport == "http" && dec.Decision != "allow" {
				t.Errorf("strict call approved by an operator: %s (%s)", dec.Decision, dec.Reason)
			}
		})
	}
}

var approvalRef = regexp.MustCompile(`ap-[0-9a-f]+`)

// running is a call in flight, started by startCall.
type running struct {
	p      peer
	id     string
	msgs   chan json.RawMessage
	cancel func(t *testing.T)
	result chan error
	stop   chan struct{}
}

// startCall sends body and returns at once. Its messages arrive on msgs;
// cancel makes the client go away (HTTP: it disconnects; stdio: it sends
// notifications/cancelled).
func startCall(t *testing.T, p peer, body, id string) *running {
	t.Helper()
	r := &running{p: p, id: id, msgs: make(chan json.RawMessage, 256), result: make(chan error, 1), stop: make(chan struct{})}
	switch x := p.(type) {
	case *httpPeer:
		ctx, cancel := context.WithCancel(context.Background())
		r.cancel = func(*testing.T) { cancel() }
		go func() {
			_, err := x.exchangeCtx(ctx, []byte(body), id, func(m json.RawMessage) { r.msgs <- m })
			r.result <- err
		}()
	case *stdioPeer:
		x.send(t, []byte(body))
		r.cancel = func(t *testing.T) {
			x.send(t, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"the user pressed Esc"}}`))
		}
		go func() {
			_, err := x.await(60*time.Second, id, func(m json.RawMessage) { r.msgs <- m }, r.stop)
			r.result <- err
		}()
	}
	return r
}

// await returns the first message of the call that satisfies match.
func (r *running) await(t *testing.T, match func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m := <-r.msgs:
			if match(m) {
				return m
			}
		case err := <-r.result:
			t.Fatalf("the call ended before the awaited message: %v", err)
		case <-timeout:
			t.Fatal("the awaited message did not come")
		}
	}
}

// done waits for the call's exchange to end. A cancelled call may get no
// response at all (the protocol asks for none): after a short grace its
// reader stops, so the next call's reader is the only one.
func (r *running) done(t *testing.T) {
	t.Helper()
	select {
	case <-r.result:
	case <-time.After(2 * time.Second):
		close(r.stop)
		<-r.result
	}
}

// TestExactnessClientGoesAway: a client that disconnects (HTTP) or sends
// notifications/cancelled (HTTP, stdio) ends its proxied call's approval
// wait at once (audited), and a call already forwarded is cancelled
// downstream: the server receives notifications/cancelled for it and
// stops.
func TestExactnessClientGoesAway(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 60s\nttl: 10m")
	d := b.startDaemon(t)
	for _, c := range []struct{ transport, surface, how string }{
		{"http", "gostdio", "disconnect"}, {"http", "rawhttp", "disconnect"},
		{"http", "rawstdio", "notifications/cancelled"}, {"stdio", "gohttp", "notifications/cancelled"}, {"stdio", "rawstdio", "notifications/cancelled"},
	} {
		t.Run(c.transport+"/"+c.surface+"/"+strings.ReplaceAll(c.how, "/", "-"), func(t *testing.T) {
			p := b.peer(t, d, c.transport, c.surface, initPlain)
			var n ids
			s := c.surface
			cancelOf := func(r *running, id string) {
				if c.how == "notifications/cancelled" && c.transport == "http" {
					p.exchange(t, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`), "")
					return
				}
				r.cancel(t)
			}

			// A call held for approval (strict, 60s wait) ends when its client goes.
			id := n.next()
			auditBefore, recBefore := len(readAudit(t, b.audit)), len(readRecords(t, b.records[s]))
			r := startCall(t, p, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"count","arguments":{"n":2},"_meta":{"progressToken":"w"}}}`, id)
			r.await(t, func(m json.RawMessage) bool { return len(progressFor([]json.RawMessage{m}, `"w"`)) > 0 })
			start := time.Now()
			cancelOf(r, id)
			a := &attempt{label: "held call, client gone", hasExecs: true}
			waitFor(t, 20*time.Second, "the held call's decision event", func() bool {
				a = &attempt{label: a.label, hasExecs: true}
				b.collect(t, a, auditBefore, recBefore, s)
				return len(a.decisions) > 0
			})
			if dec := a.exact(t); dec.Decision == "allow" || !strings.Contains(dec.Reason, "approval pending") {
				t.Errorf("held call after the client left: %s (%s)", dec.Decision, dec.Reason)
			}
			r.done(t)
			if waited := time.Since(start); waited > 10*time.Second {
				t.Errorf("the approval wait went on %s after the client left", waited)
			}

			// A forwarded call in flight is cancelled downstream.
			id = n.next()
			auditBefore, recBefore = len(readAudit(t, b.audit)), len(readRecords(t, b.records[s]))
			r = startCall(t, p, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, id)
			var wireID string
			waitFor(t, 20*time.Second, "the server to start slow", func() bool {
				a = &attempt{}
				b.collect(t, a, auditBefore, recBefore, s)
				if len(a.wire) == 1 && len(a.execs) == 1 {
					wireID = string(jsonField(json.RawMessage(a.wire[0]), "id"))
					return true
				}
				return false
			})
			cancelOf(r, id)
			waitFor(t, 20*time.Second, "notifications/cancelled downstream and the outcome event", func() bool {
				a = &attempt{label: "slow, client gone", hasExecs: true}
				b.collect(t, a, auditBefore, recBefore, s)
				return len(a.cancels) > 0 && len(a.outcomes) > 0
			})
			got := string(jsonField(jsonField(json.RawMessage(a.cancels[0]), "params"), "requestId"))
			if got != wireID {
				t.Errorf("the server was told to cancel %s; the call it runs is %s", got, wireID)
			}
			if dec := a.exact(t); dec.Decision != "allow" || a.outcomes[0].Decision != "failed" {
				t.Errorf("cancelled call: decision %s, outcome %s (%s)", dec.Decision, a.outcomes[0].Decision, a.outcomes[0].Error)
			}
			waitFor(t, 10*time.Second, "the server to stop slow", func() bool {
				for _, rec := range readRecords(t, b.records[s])[recBefore:] {
					if rec.Cancelled == "slow" {
						return true
					}
				}
				return false
			})
			r.done(t)
		})
	}
}
