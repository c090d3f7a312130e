package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeAdmin answers the admin API the way the daemon does, checking the
// token, and records what it was asked.
func fakeAdmin(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, r.Method+" "+r.URL.Path+" "+string(body))
		if r.Header.Get("Authorization") != "Bearer adm" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"the bearer token is not the admin token"}`))
			return
		}
		switch {
		case r.URL.Path == "/admin/approvals":
			_, _ = w.Write([]byte(`[{"id":"ap-1","agent":"writer","action":"command:call:vault:stash","arguments":{"item":"gold"},"argv":["x"],"state":"pending","expires":"2030-01-01T00:00:00Z"}]`))
		case r.URL.Path == "/admin/approvals/ap-1/approve":
			_, _ = w.Write([]byte(`{"id":"ap-1","agent":"writer","action":"command:call:vault:stash","state":"approved","expires":"2030-01-01T00:00:00Z"}`))
		case r.URL.Path == "/admin/approvals/ap-1/deny":
			_, _ = w.Write([]byte(`{"id":"ap-1","agent":"writer","action":"command:call:vault:stash","state":"denied"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"no such approval request"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestApprovalsCLI(t *testing.T) {
	t.Parallel()
	srv, seen := fakeAdmin(t)
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		code     int
		out, err string
		request  string
	}{
		{"list json", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"--server", srv.URL, "list", "--format", "json"}, exitOK,
			`"arguments": {`, "", "GET /admin/approvals "},
		{"list text, server after the subcommand", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"list", "--server", srv.URL}, exitOK,
			"ap-1  writer", "", "GET /admin/approvals "},
		{"approve", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"--server", srv.URL, "approve", "ap-1"}, exitOK,
			"approved ap-1: writer may run command:call:vault:stash once", "", "POST /admin/approvals/ap-1/approve "},
		{"deny with reason", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"--server", srv.URL, "deny", "ap-1", "--reason", "no"}, exitOK,
			"denied ap-1", "", `POST /admin/approvals/ap-1/deny {"reason":"no"}`},
		{"unknown id", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"--server", srv.URL, "approve", "nope"}, exitFail,
			"", "404 Not Found: no such approval request", ""},
		{"wrong token", map[string]string{"TOOLGATE_ADMIN_TOKEN": "agent"}, []string{"--server", srv.URL, "list"}, exitFail,
			"", "not the admin token", ""},
		{"no token", nil, []string{"--server", srv.URL, "list"}, exitUsage, "", "set $TOOLGATE_ADMIN_TOKEN", ""},
		{"no id", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"approve"}, exitUsage, "", "exactly one approval ID", ""},
		{"bad server", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"--server", "localhost:7330", "list"}, exitUsage, "", "base URL", ""},
		{"unreachable", map[string]string{"TOOLGATE_ADMIN_TOKEN": "adm"}, []string{"--server", "http://127.0.0.1:1", "list"}, exitFail, "", "cannot reach the gateway", ""},
		{"unknown subcommand", nil, []string{"grant"}, exitUsage, "", `unknown subcommand "grant"`, ""},
	}
	for _, c := range cases {
		// Sequential: the fake server's record is shared.
		var stdout, stderr bytes.Buffer
		cl := &cli{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return c.env[k] }, log: slog.New(slog.DiscardHandler)}
		before := len(*seen)
		code := cl.main(context.Background(), append([]string{"approvals"}, c.args...))
		if code != c.code || !strings.Contains(stdout.String(), c.out) || !strings.Contains(stderr.String(), c.err) {
			t.Errorf("%s: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout with %q, stderr with %q", c.name, code, stdout.String(), stderr.String(), c.code, c.out, c.err)
		}
		if c.request != "" && (len(*seen) != before+1 || (*seen)[before] != c.request) {
			t.Errorf("%s: requests %q, want %q", c.name, (*seen)[before:], c.request)
		}
	}
}

func TestCompactArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "-"},
		{"{\n  \"item\": \"gold\",\n  \"n\": 2\n}", `{"item":"gold","n":2}`},
		{`{"q":"say \"hi\""}`, `{"q":"say \"hi\""}`},
		{"{\"x\":\"a\u202eb\u0085\"}", `{"x":"a\u202eb\u0085"}`},
		{"{\"x\":\"\U000e0001\"}", `{"x":"\udb40\udc01"}`},
		{`{"x":"` + strings.Repeat("a", 300) + `"}`, `{"x":"` + strings.Repeat("a", listedArgsMax-6) + "…"},
		{"not json \x1b[2J", `"not json \x1b[2J"`},
	} {
		if got := compactArgs([]byte(tc.in)); got != tc.want {
			t.Errorf("compactArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
