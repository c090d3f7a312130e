// Package responses is a stand-in for the OpenAI Responses API on
// loopback (POST /v1/responses, streamed as server-sent events), so an
// end-to-end test can drive the real Codex CLI without a model: it answers
// with scripted function calls and records the function_call_output items
// the harness sends back.
//
// Which turn to play is derived from the request itself (the scripted
// call ids already in its input), so retries and side requests never
// advance the script. Codex offers MCP tools grouped in namespaces
// (mcp__<server>); the script names a tool by its flattened name
// (mcp__json_tools__query) and the server answers with the namespace and
// the short name, as the real API does.
package responses

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// idPrefix starts every call id the script makes.
const idPrefix = "call"

// Options configure a Server: the turns, the final text and the main
// conversation's tool, as for the Messages endpoint.
type Options = scriptedmodel.Options

// Server is a running scripted Responses endpoint.
type Server struct {
	scriptedmodel.Recorder
	// URL is the base URL a provider's base_url takes (ends in /v1).
	URL string

	srv  *httptest.Server
	opts Options
	seq  atomic.Int64
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

// request is the part of a Responses request the script reads.
type request struct {
	Model string            `json:"model"`
	Input []json.RawMessage `json:"input"`
	Tools []tool            `json:"tools"`
}

// tool is a function tool or a namespace grouping function tools.
type tool struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Tools []tool `json:"tools"`
}

// item is an input item: a message, a function_call or its output.
type item struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Output    json.RawMessage `json:"output"`
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.Request(r.Method, r.URL.Path)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"not served by the scripted model"}}`)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	offered, namespaces := flatten(req.Tools)
	s.Offered(offered)
	var out []map[string]any
	if s.isMain(offered) {
		step := s.record(req)
		if step < len(s.opts.Turns) {
			for i, tu := range s.opts.Turns[step] {
				out = append(out, functionCall(scriptedmodel.CallID(idPrefix, step, i), tu, namespaces))
			}
		} else {
			out = append(out, message(s.opts.FinalText))
		}
	} else {
		out = append(out, message("ok"))
	}
	model := req.Model
	if model == "" {
		model = "gpt-scripted"
	}
	writeStream(w, fmt.Sprintf("resp_%d", s.seq.Add(1)), model, out)
}

// flatten lists every offered tool name, a namespaced one as
// <namespace>__<name>, and the namespaces offered.
func flatten(tools []tool) (names, namespaces []string) {
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			namespaces = append(namespaces, t.Name)
			for _, sub := range t.Tools {
				names = append(names, t.Name+"__"+sub.Name)
			}
		case t.Name != "":
			names = append(names, t.Name)
		default:
			names = append(names, t.Type) // web_search and other built-ins
		}
	}
	return names, namespaces
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

// record notes every function_call_output of a main request and returns
// the turn that answers it.
func (s *Server) record(req request) int {
	names := map[string]string{}
	var ids []string
	for _, raw := range req.Input {
		var it item
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "function_call":
			ids = append(ids, it.CallID)
			names[it.CallID] = it.Name
			if it.Namespace != "" {
				names[it.CallID] = it.Namespace + "__" + it.Name
			}
		case "function_call_output":
			text, isErr := outputText(it.Output)
			s.Result(scriptedmodel.ToolResult{ToolUseID: it.CallID, Tool: names[it.CallID], Text: text, IsError: isErr})
		}
	}
	return scriptedmodel.Next(idPrefix, ids)
}

// outputText flattens a function_call_output's output: a string, input_text
// items, or (older clients) {content, success}.
func outputText(raw json.RawMessage) (text string, isError bool) {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, false
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			if p.Text != "" {
				out = append(out, p.Text)
			}
		}
		return strings.Join(out, "\n"), false
	}
	var obj struct {
		Content string `json:"content"`
		Success *bool  `json:"success"`
	}
	_ = json.Unmarshal(raw, &obj)
	return obj.Content, obj.Success != nil && !*obj.Success
}

// functionCall is the output item calling tu. A flattened name under an
// offered namespace is split into the namespace and the short name.
func functionCall(id string, tu scriptedmodel.ToolUse, namespaces []string) map[string]any {
	input := tu.Input
	if input == nil {
		input = map[string]any{}
	}
	args, _ := json.Marshal(input)
	it := map[string]any{"type": "function_call", "id": "fc_" + id, "call_id": id, "name": tu.Name,
		"arguments": string(args), "status": "completed"}
	for _, ns := range namespaces {
		if short, ok := strings.CutPrefix(tu.Name, ns+"__"); ok {
			it["namespace"], it["name"] = ns, short
			break
		}
	}
	return it
}

func message(text string) map[string]any {
	return map[string]any{"type": "message", "id": "msg_scripted", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
}

// writeStream sends the output items as the Responses event stream: each
// item added, its text or arguments as deltas, done, then completed.
func writeStream(w http.ResponseWriter, id, model string, items []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(event string, data map[string]any) {
		data["type"] = event
		data["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	resp := func(status string, output []map[string]any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "created_at": 0, "status": status, "model": model, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 20}
		}
		return r
	}
	send("response.created", map[string]any{"response": resp("in_progress", []map[string]any{})})
	for i, it := range items {
		itemID := it["id"]
		switch it["type"] {
		case "function_call":
			added := clone(it)
			added["arguments"], added["status"] = "", "in_progress"
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, part := range halves(it["arguments"].(string)) {
				send("response.function_call_arguments.delta", map[string]any{"output_index": i, "item_id": itemID, "delta": part})
			}
			send("response.function_call_arguments.done", map[string]any{"output_index": i, "item_id": itemID, "arguments": it["arguments"]})
		default:
			text := it["content"].([]any)[0].(map[string]any)["text"].(string)
			added := clone(it)
			added["content"], added["status"] = []any{}, "in_progress"
			send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			send("response.content_part.added", map[string]any{"output_index": i, "item_id": itemID, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			send("response.output_text.delta", map[string]any{"output_index": i, "item_id": itemID, "content_index": 0, "delta": text})
			send("response.output_text.done", map[string]any{"output_index": i, "item_id": itemID, "content_index": 0, "text": text})
			send("response.content_part.done", map[string]any{"output_index": i, "item_id": itemID, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		}
		send("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	send("response.completed", map[string]any{"response": resp("completed", items)})
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// halves splits s in two, so a client must join argument deltas.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}
