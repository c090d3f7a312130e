// Package chatcompletions is a stand-in for the OpenAI Chat Completions
// API on loopback (POST /v1/chat/completions, streamed as server-sent
// events or as one JSON completion), so an end-to-end test can drive a
// real harness speaking it — OpenCode through @ai-sdk/openai-compatible —
// without a model: it answers with scripted tool calls and records the
// tool messages the harness sends back.
//
// Which turn to play is derived from the request itself (the scripted
// tool call ids already in its messages), so retries and side requests
// (titles, summaries: requests offering no tools) never advance the
// script.
package chatcompletions

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// idPrefix starts every call id the script makes.
const idPrefix = "call"

// Options configure a Server: the turns, the final text and the main
// conversation's tool, as for the Messages endpoint.
type Options = scriptedmodel.Options

// Server is a running scripted Chat Completions endpoint.
type Server struct {
	scriptedmodel.Recorder
	// URL is the base URL a client's baseURL takes (ends in /v1).
	URL string

	srv  *httptest.Server
	opts Options
}

// Start serves the script on a loopback port until Close.
func Start(opts Options) *Server {
	if opts.FinalText == "" {
		opts.FinalText = "done"
	}
	s := &Server{opts: opts}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// request is the part of a Chat Completions request the script reads.
type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.Request(r.Method, r.URL.Path)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "not served by the scripted model")
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var offered []string
	for _, t := range req.Tools {
		offered = append(offered, t.Function.Name)
	}
	s.Offered(offered)
	var calls []map[string]any
	text := "ok"
	if s.isMain(offered) {
		step := s.record(req)
		if step < len(s.opts.Turns) {
			text = ""
			for i, tu := range s.opts.Turns[step] {
				input := tu.Input
				if input == nil {
					input = map[string]any{}
				}
				args, _ := json.Marshal(input)
				calls = append(calls, map[string]any{"id": scriptedmodel.CallID(idPrefix, step, i), "type": "function",
					"function": map[string]any{"name": tu.Name, "arguments": string(args)}})
			}
		} else {
			text = s.opts.FinalText
		}
	}
	model := req.Model
	if model == "" {
		model = "gpt-scripted"
	}
	if req.Stream {
		writeStream(w, model, text, calls)
		return
	}
	msg := map[string]any{"role": "assistant", "content": text}
	finish := "stop"
	if len(calls) > 0 {
		msg["content"], msg["tool_calls"], finish = nil, calls, "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
		"model": model, "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": usage()})
}

func usage() map[string]any {
	return map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
}

func (s *Server) isMain(offered []string) bool {
	if s.opts.MainTool == "" {
		return len(offered) > 0
	}
	for _, n := range offered {
		if n == s.opts.MainTool {
			return true
		}
	}
	return false
}

// record notes every tool message of a main request and returns the turn
// that answers it.
func (s *Server) record(req request) int {
	names := map[string]string{}
	var ids []string
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			ids = append(ids, c.ID)
			names[c.ID] = c.Function.Name
		}
		if m.Role == "tool" {
			s.Result(scriptedmodel.ToolResult{ToolUseID: m.ToolCallID, Tool: names[m.ToolCallID], Text: contentText(m.Content)})
		}
	}
	return scriptedmodel.Next(idPrefix, ids)
}

// contentText flattens a message's content: a string or text parts.
func contentText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": msg}})
	_, _ = w.Write(b)
}

// writeStream sends the reply as completion chunks: the role, then text or
// each tool call's id and name followed by its arguments in two halves,
// the finish reason, a usage chunk, and [DONE].
func writeStream(w http.ResponseWriter, model, text string, calls []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(choices []any, extra map[string]any) {
		chunk := map[string]any{"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": choices}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	send(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	finish := "stop"
	if len(calls) == 0 {
		send(delta(map[string]any{"content": text}, nil), nil)
	}
	for i, c := range calls {
		finish = "tool_calls"
		fn := c["function"].(map[string]any)
		send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil), nil)
		for _, part := range halves(fn["arguments"].(string)) {
			send(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": part}}}}, nil), nil)
		}
	}
	send(delta(map[string]any{}, finish), nil)
	send([]any{}, map[string]any{"usage": usage()})
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// halves splits s in two, so a client must join argument deltas.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}
