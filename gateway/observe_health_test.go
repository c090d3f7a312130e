package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHealthz: ready with a store that answers; the probe needs no token.
func TestHealthz(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say")
	srv := httptest.NewServer(e.g.Handler(HTTPOptions{}))
	defer srv.Close()
	for _, path := range []string{"/healthz", "/livez"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
	}
	e.g.store.Close() // the store going away makes the replica unready
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/healthz with a closed store: %s", resp.Status)
	}
}
