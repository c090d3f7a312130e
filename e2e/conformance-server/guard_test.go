package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}`
)

func modernCall(tool, caps string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `",` + strings.Replace(modernMeta, "%s", caps, 1) + `}}`
}

// TestGuardAnswer: what the guard answers itself, per era, and what it
// hands on to mcp-go untouched.
func TestGuardAnswer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		era      string
		h        http.Header
		msg      string
		wantCode int // 0: handed on
		wantData string
	}{
		{"capability missing", eraBoth, http.Header{}, modernCall(capabilityTool, `{}`), -32021, `{"requiredCapabilities":{"sampling":{}}}`},
		{"capability declared", eraBoth, overStdio, modernCall(capabilityTool, `{"sampling":{}}`), 0, ""},
		{"another tool", eraBoth, overStdio, modernCall("echo", `{}`), 0, ""},
		{"2025 call of the capability tool", eraBoth, overStdio, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + capabilityTool + `"}}`, 0, ""},
		{"notification", eraBoth, overStdio, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{"not JSON", eraBoth, overStdio, `{"jsonrpc":`, 0, ""},
		{"2026 request to the 2025-only server over HTTP", era2025, http.Header{}, modernCall("echo", `{}`), -32000, ""},
		{"2026 request to the 2025-only server over stdio", era2025, overStdio, modernCall("echo", `{}`), -32600, ""},
		{"server/discover to the 2025-only server over stdio", era2025, overStdio,
			`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + strings.Replace(modernMeta, "%s", "{}", 1) + `}}`, -32601, ""},
		{"2025 request to the 2025-only server", era2025, overStdio, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0, ""},
		{"initialize to the 2026-only server", era2026, overStdio,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			-32022, `{"requested":"2025-11-25","supported":["2026-07-28"]}`},
		{"no _meta to the 2026-only server", era2026, overStdio, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, -32602, ""},
		{"2026 request to the 2026-only server", era2026, overStdio, modernCall("echo", `{}`), 0, ""},
		{"meta version not a string", era2025, overStdio, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reply, status, ok := guard{era: tc.era}.answer([]byte(tc.msg), tc.h)
			if tc.wantCode == 0 {
				if ok {
					t.Fatalf("answered %s, want it handed on", reply)
				}
				return
			}
			wantStatus := http.StatusBadRequest
			if tc.wantCode == -32601 || tc.wantCode == -32600 {
				wantStatus = http.StatusOK // over stdio, where there is no status
			}
			if !ok || status != wantStatus {
				t.Fatalf("ok=%v status=%d, want an answer with %d", ok, status, wantStatus)
			}
			var resp struct {
				ID    json.RawMessage
				Error struct {
					Code int
					Data json.RawMessage
				}
			}
			if err := json.Unmarshal(reply, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.Error.Code != tc.wantCode || (tc.wantData != "" && string(resp.Error.Data) != tc.wantData) {
				t.Errorf("error %d %s, want %d %s", resp.Error.Code, resp.Error.Data, tc.wantCode, tc.wantData)
			}
			var want struct{ ID json.RawMessage }
			_ = json.Unmarshal([]byte(tc.msg), &want)
			if tc.wantCode == -32000 {
				want.ID = json.RawMessage("null") // an old SDK's session error names no request
			}
			if string(resp.ID) != string(want.ID) {
				t.Errorf("id %s, want the request's %s", resp.ID, want.ID)
			}
		})
	}
}

// TestGuardHTTP: over HTTP a refused request gets its 400 and never
// reaches mcp-go, another reaches it with its body unchanged, and a body
// too large to look at is refused.
func TestGuardHTTP(t *testing.T) {
	t.Parallel()
	var seen []byte
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
	})
	h := guard{era: eraBoth}.wrap(next)
	post := func(body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)))
		return rec
	}
	if rec := post(modernCall(capabilityTool, `{}`)); rec.Code != http.StatusBadRequest || seen != nil {
		t.Errorf("refused call: status %d, reached mcp-go: %q", rec.Code, seen)
	}
	body := modernCall("echo", `{}`)
	if rec := post(body); rec.Code != http.StatusTeapot || string(seen) != body {
		t.Errorf("handed-on call: status %d, mcp-go saw %q", rec.Code, seen)
	}
	if rec := post(`{"x":"` + strings.Repeat("a", maxGuardedBody) + `"}`); rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d, want 413", rec.Code)
	}
}

// TestGuardFilter: on stdio, the guard's answers go to stdout and every
// other line reaches mcp-go's input in order, a last line without a
// newline included.
func TestGuardFilter(t *testing.T) {
	t.Parallel()
	pass1 := modernCall("echo", `{}`) + "\n"
	pass2 := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	in := strings.NewReader(pass1 + modernCall(capabilityTool, `{}`) + "\n" + pass2)
	var out bytes.Buffer
	got, err := io.ReadAll(guard{era: eraBoth}.filter(in, &lockedWriter{w: &out}))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != pass1+pass2 {
		t.Errorf("mcp-go read %q", got)
	}
	if !strings.Contains(out.String(), `"code":-32021`) || !strings.HasSuffix(out.String(), "\n") {
		t.Errorf("stdout %q, want the -32021 answer as one line", out.String())
	}
}
