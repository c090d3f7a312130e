package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// stdioPeer drives the server over newline-delimited JSON-RPC in process:
// the conformance suite speaks HTTP only, so this is what shows the
// stdio server serves 2026-07-28 (a toolgate fronting it relies on that).
type stdioPeer struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	next  int
}

func startStdio(t *testing.T, era string, opts ...func(*guard)) *stdioPeer {
	t.Helper()
	s, g, err := newServer(era)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range opts {
		o(&g)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = serveStdio(ctx, s, g, inR, outW)
		outW.Close()
	}()
	p := &stdioPeer{t: t, in: inW, lines: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-done
	})
	return p
}

// meta is the _meta of a 2026-07-28 request with caps as its client
// capabilities.
func meta(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// call sends a request and returns its response, skipping notifications.
func (p *stdioPeer) call(method, params string) (result map[string]any, code int) {
	p.t.Helper()
	p.next++
	msg := `{"jsonrpc":"2.0","id":` + itoa(p.next) + `,"method":"` + method + `","params":{` + params + `}}` + "\n"
	if _, err := io.WriteString(p.in, msg); err != nil {
		p.t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("%s: the server closed stdout", method)
			}
			var resp struct {
				ID     *int
				Result map[string]any
				Error  *struct{ Code int }
			}
			if err := json.Unmarshal([]byte(line), &resp); err != nil {
				p.t.Fatalf("%s: %q: %v", method, line, err)
			}
			if resp.ID == nil || *resp.ID != p.next {
				continue // a notification, or an answer to nothing we sent
			}
			if resp.Error != nil {
				return nil, resp.Error.Code
			}
			return resp.Result, 0
		case <-deadline:
			p.t.Fatalf("%s: no answer within 5s", method)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestStdio2026: over stdio the both-era server serves 2026-07-28 —
// discover, cacheable lists, MRTR, the -32021 refusal, tasks — and still
// answers initialize.
func TestStdio2026(t *testing.T) {
	t.Parallel()
	p := startStdio(t, eraBoth)
	caps := `{"elicitation":{},"extensions":{"` + tasksExtension + `":{}}}`
	r, code := p.call("server/discover", meta(caps))
	if code != 0 || !strings.Contains(mustJSON(r["supportedVersions"]), "2026-07-28") || !strings.Contains(mustJSON(r["capabilities"]), tasksExtension) {
		t.Fatalf("server/discover: %d %v", code, r)
	}
	r, _ = p.call("tools/list", meta(caps))
	if r["ttlMs"] == nil || r["cacheScope"] == nil || !strings.Contains(mustJSON(r["tools"]), "test_input_required_result_elicitation") {
		t.Errorf("tools/list: %.300v", r)
	}
	r, _ = p.call("tools/call", `"name":"test_input_required_result_elicitation","arguments":{},`+meta(caps))
	if r["resultType"] != "input_required" {
		t.Fatalf("MRTR round 1: %v", r)
	}
	r, _ = p.call("tools/call", `"name":"test_input_required_result_elicitation","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}},`+meta(caps))
	if !strings.Contains(mustJSON(r["content"]), "Hello, Alice!") {
		t.Errorf("MRTR round 2: %v", r)
	}
	if _, code = p.call("tools/call", `"name":"`+capabilityTool+`","arguments":{},`+meta(`{}`)); code != -32021 {
		t.Errorf("%s without sampling: code %d, want -32021", capabilityTool, code)
	}
	r, _ = p.call("tools/call", `"name":"slow_compute","arguments":{"seconds":0},`+meta(caps))
	id, _ := r["taskId"].(string)
	if r["resultType"] != "task" || id == "" {
		t.Fatalf("task creation: %v", r)
	}
	if r, code = p.call("tasks/get", `"taskId":"`+id+`",`+meta(caps)); code != 0 || r["taskId"] != id {
		t.Errorf("tasks/get: %d %v", code, r)
	}
	r, code = p.call("initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}`)
	if code != 0 || r["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize: %d %v", code, r)
	}
}

// TestStdioOneEra: over stdio the 2025-only server answers server/discover
// as a server that does not know it (-32601), and the 2026-only one
// refuses initialize naming 2026-07-28.
func TestStdioOneEra(t *testing.T) {
	t.Parallel()
	if _, code := startStdio(t, era2025).call("server/discover", meta(`{}`)); code != -32601 {
		t.Errorf("2025-only server/discover: code %d, want -32601", code)
	}
	old := startStdio(t, era2025)
	if r, code := old.call("initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}`); code != 0 || r["capabilities"] == nil {
		t.Errorf("2025-only initialize: %d %v", code, r)
	} else if strings.Contains(mustJSON(r["capabilities"]), tasksExtension) {
		t.Errorf("the 2025-only server advertises the 2026 tasks extension: %v", r["capabilities"])
	}
	if _, code := startStdio(t, era2026).call("initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}`); code != -32022 {
		t.Errorf("2026-only initialize: code %d, want -32022", code)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
