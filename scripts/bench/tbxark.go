package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// startTBXark runs TBXark/mcp-proxy (-tbxark BIN, built from its public
// source; a proxy that decides nothing and writes no audit) in front of the
// same echo server over HTTP and over stdio, with the bench token as its
// bearer token, and waits until both routes answer. It is a gate like
// toolgate's: base + "/echohttp/mcp" and base + "/echostdio/mcp".
func (b *bench) startTBXark(bin string) *gate {
	addr := freeAddr()
	dir := filepath.Join(b.tmp, "tbxark")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	cfg := map[string]any{
		"mcpProxy": map[string]any{
			"baseURL": "http://" + addr, "addr": addr, "name": "tbxark-bench", "version": "1",
			"type":    "streamable-http",
			"options": map[string]any{"logEnabled": false, "authTokens": []string{benchToken}},
		},
		"mcpServers": map[string]any{
			"echohttp":  map[string]any{"url": b.echoURL, "transportType": "streamable-http"},
			"echostdio": map[string]any{"command": b.self, "args": []string{"-role", "echo-stdio"}},
		},
	}
	raw, _ := json.Marshal(cfg)
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		fatalf("%v", err)
	}
	// Its routes exist once its downstream clients connected; until then
	// the mux answers 404.
	return launch("tbxark", []string{bin, "-config", path}, dir, addr, nil, func(g *gate) bool {
		for _, route := range []string{"/echohttp/mcp", "/echostdio/mcp"} {
			res, err := http.Get(g.base + route)
			if err != nil {
				return false
			}
			res.Body.Close()
			if res.StatusCode == http.StatusNotFound {
				return false
			}
		}
		return true
	})
}

// tbxarkRoute is the streamable-HTTP endpoint TBXark/mcp-proxy serves for
// the downstream called server.
func tbxarkRoute(g *gate, server string) string {
	return fmt.Sprintf("%s/%s/mcp", g.base, server)
}
