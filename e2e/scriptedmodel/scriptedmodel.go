// Package scriptedmodel is a stand-in for the Anthropic Messages API on
// loopback, so an end-to-end test can drive the real Claude Code CLI
// without a model: it answers POST /v1/messages with scripted tool_use
// turns (streamed as server-sent events, or as one JSON message) and
// records the tool_result blocks the harness sends back.
//
// Which turn to play is derived from the request itself (the scripted
// tool_use ids already in its history), so retries and side requests the
// harness makes (titles, quota checks) never advance the script.
package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// ToolUse is one tool call the scripted model makes.
type ToolUse struct {
	Name  string
	Input map[string]any
}

// Turn is one assistant reply: the tool calls it makes (in parallel, in
// one message). A script's replies after its last turn are FinalText.
type Turn []ToolUse

// ToolResult is one tool_result block the harness sent back.
type ToolResult struct {
	ToolUseID string
	// Tool is the name of the tool_use it answers, when known.
	Tool    string
	Text    string
	IsError bool
}

// Server is a running scripted model endpoint.
type Server struct {
	// URL is the base URL to put in ANTHROPIC_BASE_URL.
	URL string

	srv       *httptest.Server
	turns     []Turn
	finalText string
	mainTool  string

	mu       sync.Mutex
	results  []ToolResult
	seen     map[string]bool
	names    map[string]string
	requests []string
	toolSets [][]string
}

// Options configure a Server.
type Options struct {
	// Turns are played in order on the main conversation.
	Turns []Turn
	// FinalText ends the conversation after the last turn.
	FinalText string
	// MainTool identifies the main conversation: a request whose tools
	// include this name. Requests without it (side requests) get a short
	// text reply and never advance the script.
	MainTool string
}

// Start serves the script on a loopback port until Close.
func Start(opts Options) *Server {
	if opts.FinalText == "" {
		opts.FinalText = "done"
	}
	s := &Server{turns: opts.Turns, finalText: opts.FinalText, mainTool: opts.MainTool,
		seen: map[string]bool{}, names: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Results returns the tool results received so far, in arrival order.
func (s *Server) Results() []ToolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ToolResult(nil), s.results...)
}

// Requests lists "METHOD PATH" of every request received, for diagnosing
// what a harness version probes.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// ToolSets returns the tool names offered in each Messages request.
func (s *Server) ToolSets() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.toolSets...)
}

// request is the part of a Messages API request the script reads.
type request struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, map[string]any{"input_tokens": 100})
		return
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"not served by the scripted model"}}`)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, fmt.Sprintf(`{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error()), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	var offered []string
	for _, t := range req.Tools {
		offered = append(offered, t.Name)
	}
	s.toolSets = append(s.toolSets, offered)
	s.mu.Unlock()
	var content []map[string]any
	stop := "end_turn"
	if s.isMain(req) {
		step := s.record(req)
		if step < len(s.turns) {
			for i, tu := range s.turns[step] {
				input := tu.Input
				if input == nil {
					input = map[string]any{}
				}
				content = append(content, map[string]any{"type": "tool_use",
					"id": fmt.Sprintf("toolu_%02d_%02d", step, i), "name": tu.Name, "input": input})
			}
			stop = "tool_use"
		} else {
			content = append(content, map[string]any{"type": "text", "text": s.finalText})
		}
	} else {
		content = append(content, map[string]any{"type": "text", "text": "ok"})
	}
	model := req.Model
	if model == "" {
		model = "claude-scripted"
	}
	if req.Stream {
		writeStream(w, model, content, stop)
		return
	}
	writeJSON(w, map[string]any{"id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 10}})
}

func (s *Server) isMain(req request) bool {
	if s.mainTool == "" {
		return len(req.Tools) > 0
	}
	for _, t := range req.Tools {
		if t.Name == s.mainTool {
			return true
		}
	}
	return false
}

// record notes every new tool_result of a main request and returns which
// scripted turn answers it: the one after the last turn whose tool_use ids
// (toolu_<turn>_<n>) the history holds. Harnesses merge consecutive
// assistant messages, so counting messages would not do.
func (s *Server) record(req request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	step := 0
	for _, m := range req.Messages {
		var blocks []block
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string content holds no blocks
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				s.names[b.ID] = b.Name
				var played, i int
				if _, err := fmt.Sscanf(b.ID, "toolu_%d_%d", &played, &i); err == nil && played+1 > step {
					step = played + 1
				}
			case "tool_result":
				if s.seen[b.ToolUseID] {
					continue
				}
				s.seen[b.ToolUseID] = true
				s.results = append(s.results, ToolResult{ToolUseID: b.ToolUseID, Tool: s.names[b.ToolUseID],
					Text: resultText(b.Content), IsError: b.IsError})
			}
		}
	}
	return step
}

// resultText flattens a tool_result's content (a string or text blocks).
func resultText(raw json.RawMessage) string {
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

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeStream sends content as the Messages API event stream: a tool_use
// block's input arrives as input_json_delta fragments, text as text_delta.
func writeStream(w http.ResponseWriter, model string, content []map[string]any, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_scripted", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	for i, c := range content {
		switch c["type"] {
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			input, _ := json.Marshal(c["input"])
			for _, part := range halves(string(input)) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		default:
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// halves splits s in two, so a client must join input_json_delta
// fragments as the real API makes it.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}
