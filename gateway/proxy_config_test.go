package gateway

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

func TestFillCredentials(t *testing.T) {
	t.Parallel()
	creds := map[string]string{"token": "s3cr3t", "empty": ""}
	cases := []struct {
		tmpl, want, err string
	}{
		{"Bearer {credential.token}", "Bearer s3cr3t", ""},
		{"plain", "plain", ""},
		{"{other} stays", "{other} stays", ""},
		{"{credential.missing}", "", `credential "missing" has no value`},
		{"{credential.empty}", "", `credential "empty" has no value`},
	}
	for _, c := range cases {
		got, err := fillCredentials(c.tmpl, creds)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "credentials:") {
				t.Errorf("%q: err %v, want %q and how to fix it", c.tmpl, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q = %q, %v; want %q", c.tmpl, got, err, c.want)
		}
	}
}

// TestServerConfig: how a server is reached — a program beside the
// workspace, the clean environment plus its own, a cwd relative to the
// workspace, headers with credentials filled in.
func TestServerConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"PATH": "/bin", "HOME": "/home/x", "SECRET_ENV": "leak"}
	getenv := func(k string) string { return env[k] }
	sv := &workspace.MCPServer{ID: "s", Command: []string{"./bin/server", "-v"}, Cwd: "data",
		Env: map[string]string{"API_KEY": "{credential.token}"}}
	cfg, err := serverConfig(sv, map[string]string{"token": "t1"}, getenv, "/ws", http.DefaultClient, discardLog(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Command[0] != filepath.Join("/ws", "bin/server") || cfg.Command[1] != "-v" || cfg.Dir != "/ws/data" {
		t.Errorf("command %v dir %q", cfg.Command, cfg.Dir)
	}
	slices.Sort(cfg.Env)
	if strings.Join(cfg.Env, " ") != "API_KEY=t1 HOME=/home/x PATH=/bin" {
		t.Errorf("env %v: want the clean environment and the server's own only", cfg.Env)
	}
	web := &workspace.MCPServer{ID: "w", URL: "https://w.example/mcp", Headers: map[string]string{"Authorization": "Bearer {credential.token}"}}
	cfg, err = serverConfig(web, map[string]string{"token": "t1"}, getenv, "/ws", http.DefaultClient, discardLog(), nil)
	if err != nil || cfg.Headers["Authorization"] != "Bearer t1" || cfg.Command != nil {
		t.Errorf("headers %v, err %v", cfg.Headers, err)
	}
	web.Headers["X"] = "{credential.nope}"
	if _, err := serverConfig(web, map[string]string{"token": "t1"}, getenv, "/ws", http.DefaultClient, discardLog(), nil); err == nil || !strings.Contains(err.Error(), "header X") {
		t.Errorf("a header naming a missing credential: %v", err)
	}
}

func TestProxyServerLookup(t *testing.T) {
	t.Parallel()
	var none *proxy
	if none.server("x") != nil {
		t.Error("a nil proxy has a server")
	}
	none.close() // a gateway without servers closes nothing
	p := &proxy{servers: map[string]*proxyServer{"a": {id: "a"}}}
	if p.server("a") == nil || p.server("b") != nil {
		t.Error("lookup by id")
	}
}
