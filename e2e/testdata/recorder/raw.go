package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"sync"
)

// rawServer answers MCP by hand, reading every message with an exact-key
// decoder.
type rawServer struct {
	rec *recorder

	mu      sync.Mutex
	cancels map[string]context.CancelFunc
}

func newRawServer(rec *recorder) *rawServer {
	return &rawServer{rec: rec, cancels: map[string]context.CancelFunc{}}
}

// decodeExact reads one JSON value with keys exactly as written and
// numbers as their literal text.
func decodeExact(b []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil, false
	}
	return m, true
}

func idKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func response(id any, result any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return b
}

func errorResponse(id any, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}

func textResult(text string, isError bool) map[string]any {
	r := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
	if isError {
		r["isError"] = true
	}
	return r
}

// logNote is a log notification carrying data.
func logNote(data any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
		"params": map[string]any{"level": "error", "logger": "recorder", "data": data}})
	return b
}

// httpErrorPrefix marks a response that streamable HTTP sends as an HTTP
// 500 with a plain-text body.
const httpErrorPrefix = "HTTP 500: backend refused token "

// handle answers one message: the notifications to send first, then the
// response (nil for a notification or a response).
func (s *rawServer) handle(ctx context.Context, msg []byte, secret string) (notes [][]byte, resp []byte) {
	m, ok := decodeExact(msg)
	if !ok {
		return nil, errorResponse(nil, -32700, "parse error")
	}
	method, _ := m["method"].(string)
	id, hasID := m["id"]
	params, _ := m["params"].(map[string]any)
	if !hasID || id == nil {
		if method == "notifications/cancelled" {
			s.mu.Lock()
			cancel := s.cancels[idKey(params["requestId"])]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		return nil, nil
	}
	switch method {
	case "":
		return nil, nil // a response to nothing we asked
	case "initialize":
		v, _ := params["protocolVersion"].(string)
		if v == "" || v >= "2026" {
			v = "2025-06-18"
		}
		return nil, response(id, map[string]any{"protocolVersion": v,
			"capabilities": map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
			"serverInfo":   map[string]any{"name": "recorder-raw", "version": "1.0.0"}})
	case "ping":
		return nil, response(id, map[string]any{})
	case "tools/list":
		var list []any
		for _, t := range tools {
			list = append(list, map[string]any{"name": t.name, "description": "recorder tool " + t.name, "inputSchema": json.RawMessage(t.schema)})
		}
		return nil, response(id, map[string]any{"tools": list})
	case "tools/call":
		return s.call(ctx, id, params, secret)
	}
	return nil, errorResponse(id, -32601, "method not found: "+method)
}

func (s *rawServer) call(ctx context.Context, id any, params map[string]any, secret string) ([][]byte, []byte) {
	name, _ := params["name"].(string)
	args, _ := params["arguments"].(map[string]any)
	argsJSON, _ := json.Marshal(args)
	known := false
	for _, t := range tools {
		known = known || t.name == name
	}
	if !known {
		return nil, errorResponse(id, -32602, "unknown tool "+name)
	}
	s.rec.write(Record{Exec: name, Args: argsJSON})
	switch name {
	case "slow":
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		key := idKey(id)
		s.mu.Lock()
		s.cancels[key] = cancel
		s.mu.Unlock()
		<-ctx.Done()
		s.mu.Lock()
		delete(s.cancels, key)
		s.mu.Unlock()
		s.rec.write(Record{Cancelled: name})
		return nil, errorResponse(id, -32800, "request cancelled")
	case "leak":
		how, _ := args["how"].(string)
		switch how {
		case "result":
			return nil, response(id, textResult("the backend token is "+secret, false))
		case "structured":
			r := textResult("see structuredContent", false)
			r["structuredContent"] = map[string]any{"token": secret}
			r["_meta"] = map[string]any{"token": secret}
			return nil, response(id, r)
		case "httperror":
			return nil, []byte(httpErrorPrefix + secret)
		case "toolerror":
			return nil, response(id, textResult("backend refused token "+secret, true))
		case "error":
			return nil, errorResponse(id, -32603, "backend refused token "+secret)
		case "escaped":
			raw := json.RawMessage(`{"content":[{"type":"text","text":` + escapeAll("the backend token is "+secret) + `}]}`)
			return nil, response(id, raw)
		case "log":
			return [][]byte{logNote("token " + secret)}, response(id, textResult("logged", false))
		case "jsontext":
			return nil, response(id, textResult(jsonText(secret), false))
		case "split":
			return nil, response(id, map[string]any{"content": splitBlocks(secret)})
		case "jsontexterror":
			return nil, errorResponse(id, -32603, jsonText(secret))
		case "spliterror":
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
				"error": map[string]any{"code": -32603, "message": "backend refused", "data": splitPieces(secret)}})
			return nil, b
		case "jsontextlog":
			return [][]byte{logNote(jsonText(secret))}, response(id, textResult("logged", false))
		case "splitlog":
			return [][]byte{logNote(splitBlocks(secret))}, response(id, textResult("logged", false))
		case "crash":
			crash(secret)
		}
		return nil, response(id, textResult("unknown how", true))
	}
	return nil, response(id, textResult(string(argsJSON), false))
}

func serveRawStdio(rec *recorder) error {
	s := newRawServer(rec)
	var out sync.Mutex
	send := func(b []byte) {
		out.Lock()
		defer out.Unlock()
		_, _ = os.Stdout.Write(append(b, '\n'))
	}
	br := bufio.NewReaderSize(os.Stdin, 1<<20)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			rec.write(Record{Wire: line})
			wg.Add(1)
			go func() {
				defer wg.Done()
				notes, resp := s.handle(context.Background(), line, secretOf(context.Background()))
				for _, n := range notes {
					send(n)
				}
				if resp != nil {
					send(resp)
				}
			}()
		}
		if err != nil {
			return nil
		}
	}
}

// rawHandler is streamable HTTP by hand: a request is answered with JSON,
// or with an SSE stream when notifications come first; a notification
// gets 202.
func rawHandler(rec *recorder) http.Handler {
	s := newRawServer(rec)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			w.WriteHeader(http.StatusOK)
			return
		case http.MethodPost:
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		notes, resp := s.handle(r.Context(), body.Bytes(), headerSecret(r.Header))
		if resp == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if bytes.HasPrefix(resp, []byte(httpErrorPrefix)) {
			http.Error(w, string(resp), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Mcp-Session-Id", "recorder-raw")
		if len(notes) == 0 {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(resp)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, m := range append(notes, resp) {
			_, _ = w.Write([]byte("event: message\ndata: " + string(m) + "\n\n"))
		}
	})
}
