package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// conformanceServer is e2e/conformance-server, built once.
func conformanceServer(t testing.TB) string {
	t.Helper()
	return confServerBuild.binary(t, "conformance-server", "./conformance-server")
}

// startConfHTTP runs the conformance server over streamable HTTP (with
// extra flags, e.g. -legacy) and returns its endpoint URL.
func startConfHTTP(t testing.TB, flags ...string) string {
	t.Helper()
	return startListening(t, conformanceServer(t), append([]string{"-addr", "127.0.0.1:0"}, flags...)...)
}

// rawSession speaks MCP streamable HTTP with raw JSON, so that tests see
// exactly the bytes a client gets.
type rawSession struct {
	t     testing.TB
	url   string
	token string
	sid   string
	next  int
}

func rawConnect(t testing.TB, url, token string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, token: token}
	s.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "toolgate-e2e", "version": "1"}})
	s.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

func (s *rawSession) post(body []byte) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest("POST", s.url, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.sid = sid
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.t.Fatalf("POST %s: HTTP %s: %s", s.url, resp.Status, b)
	}
	return resp
}

// request sends one request and returns the response message whole.
func (s *rawSession) request(method string, params any) json.RawMessage {
	s.t.Helper()
	s.next++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.next, "method": method, "params": params})
	resp := s.post(body)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	want := fmt.Sprintf(`"id":%d`, s.next)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, want) {
				return json.RawMessage(d)
			}
		}
		s.t.Fatalf("%s: no response in stream:\n%s", method, data)
	}
	return json.RawMessage(bytes.TrimSpace(data))
}

// result returns a response's result member, failing on a JSON-RPC error.
func (s *rawSession) result(method string, params any) json.RawMessage {
	s.t.Helper()
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	raw := s.request(method, params)
	if err := json.Unmarshal(raw, &m); err != nil || m.Error != nil {
		s.t.Fatalf("%s: %s", method, raw)
	}
	return m.Result
}

// rawTools returns each listed tool's raw JSON by name, in order.
func (s *rawSession) rawTools() ([]string, map[string]json.RawMessage) {
	s.t.Helper()
	var r struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(s.result("tools/list", map[string]any{}), &r); err != nil {
		s.t.Fatal(err)
	}
	var names []string
	byName := map[string]json.RawMessage{}
	for _, raw := range r.Tools {
		var t struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &t)
		names = append(names, t.Name)
		byName[t.Name] = raw
	}
	return names, byName
}

// callText calls a tool and returns its first text and isError.
func (s *rawSession) callText(tool string, args map[string]any) (string, bool) {
	s.t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(s.result("tools/call", map[string]any{"name": tool, "arguments": args}), &r); err != nil {
		s.t.Fatal(err)
	}
	if len(r.Content) == 0 {
		return "", r.IsError
	}
	return r.Content[0].Text, r.IsError
}

// close ends the session with DELETE.
func (s *rawSession) close() {
	req, _ := http.NewRequest("DELETE", s.url, nil)
	req.Header.Set("Mcp-Session-Id", s.sid)
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func fmtSscan(s string, v *int) (int, error) { return fmt.Sscan(strings.TrimSpace(s), v) }
