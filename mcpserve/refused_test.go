package mcpserve

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/mcpwire"
)

// refusals records what Options.Refused is told.
type refusals struct {
	mu   sync.Mutex
	whys []string
}

func (r *refusals) refused(_ context.Context, why error) {
	r.mu.Lock()
	r.whys = append(r.whys, why.Error())
	r.mu.Unlock()
}

func (r *refusals) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.whys...)
}

// TestRefusedToolsCalls: a tools/call the transport refuses before any
// session sees it — an ambiguous envelope, headers disagreeing with the
// body — is reported (to be audited); other refused messages are not.
func TestRefusedToolsCalls(t *testing.T) {
	t.Parallel()
	rec := &refusals{}
	srv := httptest.NewServer(NewEndpoint(Options{Modern: &fakeHandler{}, Refused: rec.refused,
		Legacy: func(context.Context, mcpwire.Peer) (Session, error) { return &scripted{}, nil }}))
	defer srv.Close()
	bodies := []struct {
		body    string
		headers []string
		told    bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"tools/list"}`, nil, true},
		{`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call"}`, nil, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"`, nil, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"x"}`, nil, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"note":"tools/call"},"id":2}`, nil, false},
		{modernBody("tools/call", `"name":"echo"`), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, "other"}, true},
		{modernBody("tools/list", ""), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call"}, false},
	}
	want := 0
	for _, b := range bodies {
		readAll(t, post(t, context.Background(), srv.URL, b.body, b.headers...))
		if b.told {
			want++
		}
		if got := len(rec.all()); got != want {
			t.Errorf("%s: told %d times, want %d (%q)", b.body, got, want, rec.all())
			want = got
		}
	}
	if w := rec.all(); len(w) == 0 || !strings.Contains(w[len(w)-1], "Header mismatch") {
		t.Errorf("reasons %q", w)
	}
	// On stdio too.
	stdioRec := &refusals{}
	c := startStdio(t, Options{Modern: &fakeHandler{}, Refused: stdioRec.refused})
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"x"}`)
	c.next(t)
	if len(stdioRec.all()) != 1 {
		t.Errorf("stdio refusals %q", stdioRec.all())
	}
}
