package admin

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/state"
)

// adminEnv is an admin server over a real broker on an embedded store and
// a real audit file, served by httptest.
type adminEnv struct {
	s      *Server
	srv    *httptest.Server
	broker *approvals.Broker
	log    *audit.Log
}

// fileAudit reads the audit file at its path (what the gateway's reader
// does for the embedded store).
type fileAudit string

func (f fileAudit) Tail(ctx context.Context, opts audit.TailOptions, emit func(audit.Record) error) error {
	return audit.Tail(ctx, string(f), opts, emit)
}

// loopbackOnly stands in for the gateway's origin check (tested there):
// no Origin, or a loopback one.
func loopbackOnly(r *http.Request) bool {
	o := r.Header.Get("Origin")
	return o == "" || strings.HasPrefix(o, "http://127.0.0.1:") || strings.HasPrefix(o, "http://localhost:")
}

func newAdminEnv(t *testing.T, edit func(*Options)) *adminEnv {
	t.Helper()
	dir := t.TempDir()
	st, err := state.Open(context.Background(), state.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	broker := approvals.New(approvals.Options{TTL: 10 * time.Minute, Store: st})
	t.Cleanup(broker.Close)
	path := filepath.Join(dir, "audit.jsonl")
	log, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	opts := Options{Token: "admin-tok", Approvals: broker, Audit: fileAudit(path), AllowOrigin: loopbackOnly,
		Status: func() any { return map[string]string{"version": "test"} }}
	if edit != nil {
		edit(&opts)
	}
	s := New(opts)
	mux := http.NewServeMux()
	s.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &adminEnv{s: s, srv: srv, broker: broker, log: log}
}

// hold opens a pending approval request, as a held call does, and returns
// its id; the waiting call ends with the test.
func (e *adminEnv) hold(t *testing.T, agent, action string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	opened := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.broker.Wait(ctx, approvals.Key{Agent: agent, Action: action, ArgsSHA256: "00", Revision: "r1"},
			approvals.Info{Arguments: []byte(`{"item":"<b>x</b>"}`), Tier: "strict"},
			approvals.WaitOptions{Wait: time.Minute, Opened: func(r approvals.Request) { opened <- r.ID }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case id := <-opened:
		return id
	case <-time.After(30 * time.Second):
		t.Fatal("no approval request opened")
		return ""
	}
}

// noRedirect keeps 303s visible to the test.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, method, u string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

var adminAuth = map[string]string{"Authorization": "Bearer admin-tok"}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
