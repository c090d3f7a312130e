// Package gemini is a stand-in for the Gemini API's generateContent on
// loopback (POST /v1beta/models/<model>:streamGenerateContent?alt=sse, and
// the unstreamed :generateContent), so an end-to-end test can drive the
// real Gemini CLI without a model: it answers with scripted functionCall
// parts and records the functionResponse parts the harness sends back.
//
// Which turn to play is derived from the request itself (the scripted
// call ids already in its contents), so retries and side requests (the
// CLI's own checks, which offer no tools) never advance the script.
package gemini

import (
	"encoding/json"
	"fmt"
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

// Server is a running scripted Gemini endpoint.
type Server struct {
	scriptedmodel.Recorder
	// URL is the base URL for GOOGLE_GEMINI_BASE_URL.
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
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// request is the part of a generateContent request the script reads.
type request struct {
	Contents []content `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

type part struct {
	Text         string `json:"text,omitempty"`
	FunctionCall *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.Request(r.Method, r.URL.Path)
	model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") {
		writeError(w, http.StatusNotFound, "not served by the scripted model")
		return
	}
	switch method {
	case "countTokens":
		writeJSON(w, map[string]any{"totalTokens": 100})
		return
	case "streamGenerateContent", "generateContent":
	default:
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
		for _, f := range t.FunctionDeclarations {
			offered = append(offered, f.Name)
		}
	}
	s.Offered(offered)
	var parts []map[string]any
	if s.isMain(offered) {
		step := s.record(req)
		if step < len(s.opts.Turns) {
			for i, tu := range s.opts.Turns[step] {
				args := tu.Input
				if args == nil {
					args = map[string]any{}
				}
				parts = append(parts, map[string]any{"functionCall": map[string]any{
					"id": scriptedmodel.CallID(idPrefix, step, i), "name": tu.Name, "args": args}})
			}
		} else {
			parts = append(parts, map[string]any{"text": s.opts.FinalText})
		}
	} else {
		parts = append(parts, map[string]any{"text": "ok"})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": parts}}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
		"modelVersion":  model,
	}
	if method == "generateContent" {
		writeJSON(w, resp)
		return
	}
	writeStream(w, resp)
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

// record notes every functionResponse of a main request and returns the
// turn that answers it.
func (s *Server) record(req request) int {
	var ids []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				ids = append(ids, p.FunctionCall.ID)
			case p.FunctionResponse != nil:
				text, isErr := responseText(p.FunctionResponse.Response)
				s.Result(scriptedmodel.ToolResult{ToolUseID: p.FunctionResponse.ID, Tool: p.FunctionResponse.Name, Text: text, IsError: isErr})
			}
		}
	}
	return scriptedmodel.Next(idPrefix, ids)
}

// responseText flattens a functionResponse's response: {output: …} or
// {error: …}, a string or any JSON value.
func responseText(raw json.RawMessage) (text string, isError bool) {
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil {
		return string(raw), false
	}
	if e, ok := r["error"]; ok {
		return flat(e), true
	}
	if o, ok := r["output"]; ok {
		return flat(o), false
	}
	return string(raw), false
}

func flat(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "NOT_FOUND"}})
}

// writeStream sends resp as the alt=sse stream: one chunk per part, the
// finish reason and usage on the last, so a client must join chunks.
func writeStream(w http.ResponseWriter, resp map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	cand := resp["candidates"].([]any)[0].(map[string]any)
	parts := cand["content"].(map[string]any)["parts"].([]map[string]any)
	for i, p := range parts {
		c := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": []any{p}}}
		chunk := map[string]any{"candidates": []any{c}, "modelVersion": resp["modelVersion"]}
		if i == len(parts)-1 {
			c["finishReason"] = cand["finishReason"]
			chunk["usageMetadata"] = resp["usageMetadata"]
		}
		send(chunk)
	}
}
