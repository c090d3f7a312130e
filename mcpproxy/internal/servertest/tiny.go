// Package servertest holds the downstream MCP servers the proxy's tests
// talk to, shared by the relay's tests (mcpproxy) and its transports'
// (mcpproxy/transport): the tiny stdio server (the test binary re-run as
// a child process, speaking over real pipes), mcp-go's server over real
// streamable HTTP, and scripted HTTP servers for what no well-behaved
// server does. It is test support: only test files import it.
package servertest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Main runs a test binary's tests, or the tiny stdio MCP server when the
// binary was started as one (TG_TINY_MCP=1, what TinyConfig starts): a
// test package that dials TinyConfig calls it from its TestMain.
func Main(m *testing.M) {
	if os.Getenv("TG_TINY_MCP") == "1" {
		tinyServer()
		os.Exit(0)
	}
	// A test binary built for coverage warns on stderr, as it exits,
	// unless GOCOVERDIR is set; the servers' stderr is part of what the
	// tests check.
	if os.Getenv("GOCOVERDIR") == "" {
		dir, err := os.MkdirTemp("", "tiny-cover-")
		if err == nil {
			os.Setenv("GOCOVERDIR", dir)
		}
	}
	code := m.Run()
	if dir := os.Getenv("GOCOVERDIR"); strings.Contains(dir, "tiny-cover-") {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// TinyCommand is the argv that starts the tiny stdio server: the running
// test binary, whose TestMain calls Main.
func TinyCommand() []string { return []string{os.Args[0]} }

// TinyEnv is the tiny server's whole environment: what makes the binary
// one, then env, its switches (see tinyServer).
func TinyEnv(env ...string) []string {
	return append([]string{"TG_TINY_MCP=1", "GOCOVERDIR=" + os.Getenv("GOCOVERDIR")}, env...)
}

// tinyServer speaks newline-delimited JSON-RPC on stdin/stdout. Tools:
// echo, crash, hang, cancelled, big, garbage, progress, ask, changed, pid,
// state, rpcerror, slow. TG_TINY_TOOLS sets how many extra tools
// tools/list pages through (two a page); TG_TINY_MODERN answers
// server/discover; TG_TINY_NO_INIT refuses initialize as a
// 2026-07-28-only server does (-32022); TG_TINY_NOREAD never reads stdin;
// TG_TINY_HANG_AFTER_INIT answers initialize, then reads nothing more;
// TG_TINY_IGNORE_EOF outlives the end of its stdin.
func tinyServer() {
	if f := os.Getenv("TG_TINY_FAIL_IF"); f != "" {
		if _, err := os.Stat(f); err == nil {
			fmt.Fprintln(os.Stderr, "tiny: refusing to start")
			os.Exit(4)
		}
	}
	if os.Getenv("TG_TINY_NOREAD") == "1" {
		time.Sleep(time.Hour)
	}
	var mu sync.Mutex
	write := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		os.Stdout.Write(append(b, '\n'))
		mu.Unlock()
	}
	writeRaw := func(s string) {
		mu.Lock()
		os.Stdout.WriteString(s)
		mu.Unlock()
	}
	type msg struct {
		ID     json.RawMessage `json:"id,omitempty"`
		Method string          `json:"method,omitempty"`
		Params json.RawMessage `json:"params,omitempty"`
		Result json.RawMessage `json:"result,omitempty"`
		Error  json.RawMessage `json:"error,omitempty"`
	}
	answer := func(id json.RawMessage, result any) {
		write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	var (
		level     string
		subs      []string
		cancelled []string
		waiting   = map[string]chan json.RawMessage{}
	)
	extra, _ := strconv.Atoi(os.Getenv("TG_TINY_TOOLS"))
	handle := func(m msg) {
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
			Cursor    string         `json:"cursor"`
			Level     string         `json:"level"`
			URI       string         `json:"uri"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
			RequestID       json.RawMessage `json:"requestId"`
			ProtocolVersion string          `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch m.Method {
		case "initialize":
			if os.Getenv("TG_TINY_NO_INIT") == "1" {
				write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32022, "message": "Unsupported protocol version",
					"data": map[string]any{"supported": []string{"2026-07-28"}, "requested": p.ProtocolVersion}}})
				return
			}
			v := p.ProtocolVersion
			if v == "" {
				v = "2025-11-25"
			}
			answer(m.ID, map[string]any{"protocolVersion": v, "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}},
				"serverInfo": map[string]any{"name": "tiny", "version": "1"}})
		case "server/discover":
			if os.Getenv("TG_TINY_MODERN") == "1" {
				answer(m.ID, map[string]any{"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{"tools": map[string]any{}}})
				return
			}
			write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		case "tools/list":
			names := []string{"echo", "crash", "hang"}
			for i := range extra {
				names = append(names, fmt.Sprintf("extra%02d", i))
			}
			start := 0
			if p.Cursor != "" {
				start, _ = strconv.Atoi(strings.TrimPrefix(p.Cursor, "p"))
			}
			end := min(start+2, len(names))
			var tools []any
			for _, n := range names[start:end] {
				tools = append(tools, map[string]any{"name": n, "inputSchema": map[string]any{"type": "object", "$defs": map[string]any{}}})
			}
			res := map[string]any{"tools": tools}
			if end < len(names) {
				res["nextCursor"] = fmt.Sprintf("p%d", end)
			}
			answer(m.ID, res)
		case "logging/setLevel":
			mu.Lock()
			level = p.Level
			mu.Unlock()
			answer(m.ID, map[string]any{})
		case "resources/subscribe":
			mu.Lock()
			subs = append(subs, p.URI)
			mu.Unlock()
			answer(m.ID, map[string]any{})
		case "notifications/cancelled":
			mu.Lock()
			cancelled = append(cancelled, string(p.RequestID))
			mu.Unlock()
		case "tools/call":
			switch p.Name {
			case "echo":
				s, _ := p.Arguments["text"].(string)
				answer(m.ID, text(s))
			case "crash":
				fmt.Fprintln(os.Stderr, "tiny: crashing on purpose")
				os.Exit(3)
			case "hang":
			case "cancelled":
				mu.Lock()
				s := strings.Join(cancelled, ",")
				mu.Unlock()
				answer(m.ID, text(s))
			case "big":
				n, _ := p.Arguments["n"].(float64)
				writeRaw(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", int(n)) + "\"}}\n")
				answer(m.ID, text("big"))
			case "garbage":
				writeRaw("this is not json\n{\"jsonrpc\":\"2.0\",\"id\":99999,\"result\":{}}\n")
				answer(m.ID, text("after garbage"))
			case "progress":
				write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": p.Meta.ProgressToken, "progress": 1, "total": 2}})
				answer(m.ID, text("progressed"))
			case "ask":
				ch := make(chan json.RawMessage, 1)
				mu.Lock()
				waiting[`"s1"`] = ch
				mu.Unlock()
				write(map[string]any{"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": map[string]any{"messages": []any{}}})
				if p.Arguments["withdraw"] == true {
					write(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "s1"}})
				}
				answer(m.ID, text("client said "+string(<-ch)))
			case "changed":
				write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				answer(m.ID, text("changed"))
			case "pid":
				answer(m.ID, text(strconv.Itoa(os.Getpid())))
			case "state":
				mu.Lock()
				s := level + "|" + strings.Join(subs, ",")
				mu.Unlock()
				answer(m.ID, text(s))
			case "rpcerror":
				write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32099, "message": "tiny refuses"}})
			case "slow":
				ms, _ := p.Arguments["ms"].(float64)
				time.Sleep(time.Duration(ms) * time.Millisecond)
				answer(m.ID, text("slow done"))
			default:
				write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "unknown tool " + p.Name}})
			}
		default:
			if len(m.ID) > 0 && m.Method != "" {
				write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			}
		}
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		var m msg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.Method == "" && len(m.ID) > 0 {
			// A response to the server's own request.
			mu.Lock()
			ch := waiting[string(m.ID)]
			delete(waiting, string(m.ID))
			mu.Unlock()
			if ch != nil {
				ch <- m.Result
			}
			continue
		}
		if m.Method == "initialize" && os.Getenv("TG_TINY_HANG_AFTER_INIT") == "1" {
			// Alive, answering nothing more and reading nothing more: its
			// stdin fills up, and its end does not reach it.
			handle(m)
			time.Sleep(time.Hour)
		}
		go handle(m)
	}
	if os.Getenv("TG_TINY_IGNORE_EOF") == "1" {
		time.Sleep(time.Hour)
	}
}
