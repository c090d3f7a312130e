package mcpproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// switchable is a downstream whose eras a test changes: discover always
// lists 2026-07-28; initialize is served while sessions holds, and
// refused (-32022) otherwise; down answers everything HTTP 500. discovers
// counts the probes.
type switchable struct {
	sessions, down atomic.Bool
	discovers      atomic.Int64
	url            string
}

func newSwitchable(t *testing.T) *switchable {
	sw := &switchable{}
	sw.sessions.Store(true)
	sw.url = rawHTTP(t, func(w http.ResponseWriter, m *jsonrpc.Message) {
		switch {
		case sw.down.Load():
			http.Error(w, "down", http.StatusInternalServerError)
		case m.Method == "server/discover":
			sw.discovers.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":{}}`)}).Encode())
		case m.Method == "initialize" && sw.sessions.Load():
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)}).Encode())
		default:
			unsupportedVersion(w, m)
		}
	})
	return sw
}

// TestErasCached: one probe serves every caller, concurrent ones
// included; a probe that failed is not kept; a refusal in an era the
// result says the server speaks has it probed again, and the new answer
// is what the server does now.
func TestErasCached(t *testing.T) {
	t.Parallel()
	sw := newSwitchable(t)
	var probed atomic.Int64
	e := NewEras(&transport.Config{ID: "sw", URL: sw.url, Timeout: 5 * time.Second}, ClientInfo{Name: "t", Version: "1"},
		func(mcpwire.Era, error) { probed.Add(1) })
	e.minAge = 0
	ctx := context.Background()

	sw.down.Store(true)
	if _, _, err := e.Get(ctx); err == nil {
		t.Fatal("a server answering nothing has an era")
	}
	sw.down.Store(false)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if era, discover, err := e.Get(ctx); err != nil || era != mcpwire.EraDual || discover == nil {
				t.Errorf("Get = %v %s %v, want both eras with the DiscoverResult", era, discover, err)
			}
		}()
	}
	wg.Wait()
	if n := sw.discovers.Load(); n != 1 {
		t.Errorf("%d discover probes for 8 callers after a failed probe, want 1 (the failure not kept, the success shared)", n)
	}

	e.Failed(mcpwire.EraModern) // spoken: dropped
	sw.sessions.Store(false)    // the server stops serving initialize
	if era, _, _ := e.Get(ctx); era != mcpwire.EraModern {
		t.Errorf("after a refusal the era is %v, want %v (probed again)", era, mcpwire.EraModern)
	}
	e.Failed(mcpwire.EraLegacy) // not spoken by what is kept: nothing to learn
	if _, _, _ = e.Get(ctx); sw.discovers.Load() != 2 {
		t.Errorf("%d probes, want 2: a refusal in an era the server is not known to speak probes nothing", sw.discovers.Load())
	}
	if probed.Load() != 3 {
		t.Errorf("the probed hook heard %d probes, want 3", probed.Load())
	}
}

// TestErasRefusalFlood: a client whose handshake is refused again and
// again (a hostile one, or a broken one) cannot have the server probed
// more often than the minimum age allows.
func TestErasRefusalFlood(t *testing.T) {
	t.Parallel()
	sw := newSwitchable(t)
	e := NewEras(&transport.Config{ID: "sw", URL: sw.url, Timeout: 5 * time.Second}, ClientInfo{Name: "t", Version: "1"}, nil)
	e.minAge = time.Hour
	ctx := context.Background()
	for range 50 {
		e.Failed(mcpwire.EraLegacy)
		if _, _, err := e.Get(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := sw.discovers.Load(); n != 1 {
		t.Errorf("50 refusals probed the server %d times, want 1", n)
	}
}

// TestErasGetBoundedByCaller: a caller whose context ends stops waiting;
// the probe goes on for the others.
func TestErasGetBoundedByCaller(t *testing.T) {
	t.Parallel()
	e := NewEras(&transport.Config{ID: "s", Command: []string{"sleep", "60"}, Timeout: 300 * time.Millisecond}, ClientInfo{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := e.Get(ctx); err == nil {
		t.Fatal("no error from a cancelled wait")
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("the wait took %s after its context ended", d)
	}
	if _, _, err := e.Get(context.Background()); err == nil {
		t.Error("a silent server has an era")
	}
}

// TestEraRefusedHooks: a session whose initialize the server refuses, and
// a bridge whose stateless request has its protocol version refused, say
// so (so the probe is asked again); an accepted handshake says nothing.
func TestEraRefusedHooks(t *testing.T) {
	t.Parallel()
	refused := make(chan mcpwire.Era, 4)
	hooks := Hooks{CallTool: forwardAll, EraRefused: func(era mcpwire.Era) { refused <- era }}

	ok := newRecorder()
	startSession(t, tinyConfig("tiny"), ok, hooks)
	rec := newRecorder()
	s, err := NewSession(context.Background(), tinyConfig("tiny", "TG_TINY_NO_INIT=1"), rec, hooks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.HandleClient(context.Background(), msg(t, initMsg))
	if got := rec.wait(t, `"error"`); !strings.Contains(got.msg, "-32022") {
		t.Errorf("refused initialize answered %s", got.msg)
	}
	if era := <-refused; era != mcpwire.EraLegacy {
		t.Errorf("session refusal reported as %v", era)
	}

	sw := newSwitchable(t)
	brec := newRecorder()
	b, err := NewBridge(context.Background(), (&transport.Config{ID: "sw", URL: sw.url, Timeout: 5 * time.Second}).Stateless(), brec, hooks, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	b.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	brec.wait(t, `"id":7`)
	if era := <-refused; era != mcpwire.EraModern {
		t.Errorf("bridge refusal reported as %v", era)
	}
	select {
	case era := <-refused:
		t.Errorf("an extra refusal reported: %v", era)
	default:
	}
}
