package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// startTBXark runs TBXark/mcp-proxy (-tbxark BIN, built from its public
// source; a proxy that decides nothing and writes no audit) in front of the
// same echo server over HTTP and over stdio, with the bench token as its
// bearer token, and waits until both routes answer. It is a gate like
// toolgate's: base + "/echohttp/mcp" and base + "/echostdio/mcp".
func (b *bench) startTBXark(bin string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("find a free port: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
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
	logf, err := os.Create(filepath.Join(dir, "tbxark.log"))
	if err != nil {
		fatalf("%v", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "-config", path)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fatalf("start TBXark/mcp-proxy %s: %v", bin, err)
	}
	g := &gate{cmd: cmd, pid: cmd.Process.Pid, base: "http://" + addr, dir: dir}
	// Its routes exist once its downstream clients connected; until then
	// the mux answers 404.
	deadline := time.Now().Add(60 * time.Second)
	for _, route := range []string{"/echohttp/mcp", "/echostdio/mcp"} {
		for {
			res, err := http.Get(g.base + route)
			if err == nil {
				res.Body.Close()
				if res.StatusCode != http.StatusNotFound {
					break
				}
			}
			if time.Now().After(deadline) {
				g.stop()
				log, _ := os.ReadFile(filepath.Join(dir, "tbxark.log"))
				fatalf("TBXark/mcp-proxy did not serve %s at %s: %v\n%s", route, g.base, err, log)
			}
			time.Sleep(50 * time.Millisecond) // polling readiness of another process
		}
	}
	return g
}

// tbxarkRoute is the streamable-HTTP endpoint TBXark/mcp-proxy serves for
// the downstream called server.
func tbxarkRoute(g *gate, server string) string {
	return fmt.Sprintf("%s/%s/mcp", g.base, server)
}
