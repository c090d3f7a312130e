package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/packs/contain"
	"github.com/toolgate/toolgate/workspace"
)

// proxy serves the workspace's MCP servers: one surface per server, each
// shown to each agent through its own endpoint.
type proxy struct {
	servers map[string]*proxyServer
}

// proxyServer is one downstream server: how to reach it, the tools it was
// last seen to list, and the per-agent endpoints.
type proxyServer struct {
	id  string
	cfg *transport.Config
	// stateless is cfg for talking to the server in 2026-07-28 terms.
	stateless *transport.Config
	down      downstream

	mu     sync.Mutex
	listed bool
	lister mcpproxy.Lister
	// watcher hears the server's tool changes while no client session
	// listens (a client session opens its downstream stream only once its
	// client opens one).
	watcher mcpproxy.Watcher
	listErr error
	// downErr is why a client session's connection to the server is
	// down (its restarts failing), nil once it is back.
	downErr  error
	tools    []toolEntry
	toolsIdx map[string]int
}

// newProxy resolves every server's environment, headers and bounds. It
// opens nothing: downstream sessions start when clients arrive. headers,
// when set, adds headers to every HTTP request sent downstream
// (transport.Config.RequestHeaders: the gateway's trace context); cm is
// the Manager stdio servers start contained by (the packs runner's).
func newProxy(ws *workspace.Workspace, creds map[string]string, getenv func(string) string, baseDir string, log *slog.Logger,
	headers func(context.Context, []byte, http.Header), cm *contain.Manager) (*proxy, error) {
	p := &proxy{servers: map[string]*proxyServer{}}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: transport}
	for _, sv := range ws.MCPServers {
		cfg, err := serverConfig(sv, creds, getenv, baseDir, client, log, cm)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: %w", sv.ID, err)
		}
		cfg.RequestHeaders = headers
		ps := &proxyServer{id: sv.ID, cfg: cfg, stateless: cfg.Stateless(), toolsIdx: map[string]int{}}
		// 2026-07-28 requests mirror x-mcp-header arguments into headers,
		// written from the decided body.
		ps.stateless.ParamHeaders = func(tool string, params []byte) map[string]string {
			if def := ps.headerTool(tool); def != nil {
				return mcp.GenerateParamHeaders(def, params)
			}
			return nil
		}
		p.servers[sv.ID] = ps
	}
	return p, nil
}

func serverConfig(sv *workspace.MCPServer, creds map[string]string, getenv func(string) string, baseDir string, client *http.Client, log *slog.Logger, cm *contain.Manager) (*transport.Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg := &transport.Config{
		ID: sv.ID, URL: sv.URL, Transport: sv.Transport, ProtocolVersion: sv.ProtocolVersion,
		Timeout: sv.Timeout.D(), MaxMessage: int64(sv.MaxOutput), HTTPClient: client,
		Logger: log.With("server", sv.ID),
		// A stdio server's whole tree stops with its session and with the
		// gateway, even one killed outright (see Config.Contain).
		Contain: cm,
		// What a stdio server last said on stderr, across its processes:
		// the status of a server that fails to start shows it.
		Stderr: &transport.StderrTail{},
	}
	if len(sv.TimeoutOverrides) > 0 {
		cfg.TimeoutFor = map[string]time.Duration{}
		for k, v := range sv.TimeoutOverrides {
			cfg.TimeoutFor[k] = v.D()
		}
	}
	if len(sv.Command) > 0 {
		cfg.Command = append([]string(nil), sv.Command...)
		vars := map[string]string{}
		for _, k := range []string{"PATH", "HOME", "LANG", "TMPDIR"} {
			if v := getenv(k); v != "" {
				vars[k] = v
			}
		}
		for k, tmpl := range sv.Env {
			v, err := fillCredentials(tmpl, creds)
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", k, err)
			}
			vars[k] = v
		}
		for k, v := range vars {
			cfg.Env = append(cfg.Env, k+"="+v)
		}
		cfg.Dir = baseDir
		if sv.Cwd != "" {
			cfg.Dir = sv.Cwd
			if !filepath.IsAbs(sv.Cwd) {
				cfg.Dir = filepath.Join(baseDir, sv.Cwd)
			}
		}
		// A relative program path names a file beside the workspace.
		if strings.ContainsRune(cfg.Command[0], filepath.Separator) && !filepath.IsAbs(cfg.Command[0]) {
			cfg.Command[0] = filepath.Join(baseDir, cfg.Command[0])
		}
	}
	if len(sv.Headers) > 0 {
		cfg.Headers = map[string]string{}
		for k, tmpl := range sv.Headers {
			v, err := fillCredentials(tmpl, creds)
			if err != nil {
				return nil, fmt.Errorf("header %s: %w", k, err)
			}
			cfg.Headers[k] = v
		}
	}
	return cfg, nil
}

// fillCredentials replaces {credential.<name>} in a server's env or header
// value; no other placeholder exists there.
func fillCredentials(tmpl string, creds map[string]string) (string, error) {
	var b strings.Builder
	for _, seg := range workspace.ParseTemplate(tmpl) {
		if seg.Param == "" {
			b.WriteString(seg.Literal)
			continue
		}
		name, ok := seg.IsCredential()
		if !ok {
			b.WriteString("{" + seg.Param + "}")
			continue
		}
		v, ok := creds[name]
		if !ok || v == "" {
			return "", fmt.Errorf("credential %q has no value; set the variable or file that its credentials: entry names", name)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// server returns the proxied server with that id, or nil when the surface
// is not an MCP server.
func (p *proxy) server(id string) *proxyServer {
	if p == nil {
		return nil
	}
	return p.servers[id]
}
