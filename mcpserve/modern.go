package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// Handler serves the stateless (2026-07-28) requests of one agent on one
// surface. Every request stands alone: what it needs travels in its _meta.
type Handler interface {
	// Serve answers request m: notifications about it (progress) go out
	// through out as droppable messages, then the response, once, as a
	// non-droppable one. It returns when the request is answered or ctx
	// ends (the client went away: the request is cancelled).
	Serve(ctx context.Context, m *jsonrpc.Message, req Request, out mcpwire.Peer)
	// Notify takes an id-less message: a notification, or a request sent
	// without an id (which it audits where that matters and never runs).
	Notify(ctx context.Context, m *jsonrpc.Message, req Request)
}

// modernPost validates a stateless request's headers against its body
// (the decision is always taken on the body, so the headers must say the
// same) and serves it.
func (e *Endpoint) modernPost(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, req Request, metaVersion, headerVersion string) {
	id := m.ID
	if !jsonrpc.HasID(id) {
		id = nil
	}
	if e.opts.Modern == nil {
		writeMessage(w, http.StatusBadRequest, unsupportedVersion(id, metaVersion))
		return
	}
	if msg := validateModern(r.Header, m, req, metaVersion, headerVersion); msg != nil {
		out := msg(id)
		if m.Method == "tools/call" && e.opts.Refused != nil {
			e.opts.Refused(r.Context(), errors.New(jsonrpc.ParseError(jsonrpc.Field(out, "error")).Message))
		}
		writeMessage(w, http.StatusBadRequest, out)
		return
	}
	req.Header = r.Header.Get
	if m.Kind() != jsonrpc.KindRequest {
		e.opts.Modern.Notify(r.Context(), m, req)
		if mustBeRequest(m) {
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, notARequest(m))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if mcpwire.RemovedInModern(m.Method) {
		writeRPCError(w, http.StatusNotFound, id, jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method+" was removed in protocol version "+mcpwire.Modern)
		return
	}
	dw := &directWriter{w: w, accept: accepts(r, "text/event-stream")}
	dw.flusher, _ = w.(http.Flusher)
	e.opts.Modern.Serve(mcpwire.WithStreamHints(r.Context(), dw), m, req, dw)
	dw.close()
}

// validateModern returns the error response builder for a request whose
// headers or protocol fields are wrong, nil when it may be served.
func validateModern(h http.Header, m *jsonrpc.Message, req Request, metaVersion, headerVersion string) func(id json.RawMessage) []byte {
	fail := func(code int, msg string) func(json.RawMessage) []byte {
		return func(id json.RawMessage) []byte { return jsonrpc.ErrorResponse(id, code, msg) }
	}
	switch {
	case h.Get(mcpwire.HeaderLastEventID) != "":
		return fail(jsonrpc.CodeHeaderMismatch, "Last-Event-ID is not supported in protocol version "+mcpwire.Modern+": streams are not resumable; re-issue the request with a new id")
	case headerVersion == "":
		return fail(jsonrpc.CodeHeaderMismatch, "Header mismatch: the "+mcpwire.HeaderProtocolVersion+" header is required on a request carrying "+mcpwire.MetaProtocolVersion)
	case metaVersion == "":
		return fail(jsonrpc.CodeInvalidParams, "Invalid params: missing _meta field "+mcpwire.MetaProtocolVersion)
	case headerVersion != metaVersion:
		return fail(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+mcpwire.HeaderProtocolVersion+" header "+headerVersion+" does not match body "+mcpwire.MetaProtocolVersion+" "+metaVersion)
	case metaVersion != mcpwire.Modern:
		return func(id json.RawMessage) []byte { return unsupportedVersion(id, metaVersion) }
	case m.Kind() == jsonrpc.KindRequest && !isObject(req.Capabilities):
		return fail(jsonrpc.CodeInvalidParams, "Invalid params: missing or invalid _meta field "+mcpwire.MetaClientCapabilities)
	}
	if m.Kind() != jsonrpc.KindRequest {
		return nil
	}
	if got := h.Get(mcpwire.HeaderMethod); got != m.Method {
		if got == "" {
			return fail(jsonrpc.CodeHeaderMismatch, "Header mismatch: the "+mcpwire.HeaderMethod+" header is required")
		}
		return fail(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+mcpwire.HeaderMethod+" header "+quote(got)+" does not match body method "+quote(m.Method))
	}
	field, required := nameField(m.Method)
	if field == "" {
		return nil
	}
	raw := h.Get(mcpwire.HeaderName)
	if raw == "" {
		if !required {
			return nil
		}
		return fail(jsonrpc.CodeHeaderMismatch, "Header mismatch: the "+mcpwire.HeaderName+" header is required for "+m.Method)
	}
	decoded, ok := mcp.DecodeHeaderValue(raw)
	if !ok {
		return fail(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+mcpwire.HeaderName+" has an invalid Base64 encoding")
	}
	var body string
	if err := json.Unmarshal(jsonrpc.Field(m.Params, field), &body); err != nil || decoded != body {
		return fail(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+mcpwire.HeaderName+" header "+quote(decoded)+" does not match body params."+field+" "+quote(body))
	}
	return nil
}

// nameField is the params member Mcp-Name mirrors for method, and whether
// the header is required (it is optional for the tasks extension's methods).
func nameField(method string) (field string, required bool) {
	switch method {
	case "tools/call", "prompts/get":
		return "name", true
	case "resources/read":
		return "uri", true
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId", false
	}
	return "", false
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func quote(s string) string { return string(jsonrpc.Quote(s)) }

// writeMessage writes one JSON-RPC message as the whole response.
func writeMessage(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}

// statusFor is the HTTP status 2026-07-28 gives a JSON-RPC error response
// sent as plain JSON.
func statusFor(msg []byte) int {
	if !bytes.Contains(msg, []byte(`"error"`)) {
		return http.StatusOK
	}
	m, err := jsonrpc.ParseMessage(msg)
	if err != nil || m.Error == nil {
		return http.StatusOK
	}
	switch jsonrpc.ParseError(m.Error).Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeHeaderMismatch, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		jsonrpc.CodeInvalidRequest, jsonrpc.CodeInvalidParams, jsonrpc.CodeParseError:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// directWriter is the response of one stateless request, written as the
// handler produces it with no goroutine or queue in between: a response
// that comes first goes back as plain JSON; a notification first opens an
// SSE stream scoped to the request, which the response ends. It is a Peer;
// Sends after the response (or after the HTTP handler returned) are
// dropped.
type directWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	flusher http.Flusher
	accept  bool // the client accepts text/event-stream
	sse     bool
	done    bool
}

// Send implements Peer: droppable messages are notifications about the
// request; the one non-droppable message is its response.
func (d *directWriter) Send(msg []byte, _ json.RawMessage, droppable bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	if !d.sse {
		if !droppable || !d.accept {
			if droppable {
				return // no stream to carry notifications on
			}
			writeMessage(d.w, statusFor(msg), msg)
			d.done = true
			return
		}
		d.openSSE()
	}
	if !writeEvent(d.w, msg) {
		d.done = true
		return
	}
	if d.flusher != nil {
		d.flusher.Flush()
	}
	if !droppable {
		d.done = true
	}
}

// openSSE starts the SSE stream; d.mu must be held.
func (d *directWriter) openSSE() {
	h := d.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	d.w.WriteHeader(http.StatusOK)
	d.sse = true
}

// Streamed implements StreamHints: the downstream answers with an SSE
// stream, so the client gets one too (when it accepts one).
func (d *directWriter) Streamed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.sse || !d.accept {
		return
	}
	d.openSSE()
	if d.flusher != nil {
		d.flusher.Flush()
	}
}

// Paused implements StreamHints: 2026-07-28 streams are not resumable,
// so the client's stream stays open while toolgate polls the server.
func (d *directWriter) Paused(time.Duration) {}

// close ends the writer: nothing more is written once the HTTP handler
// returns.
func (d *directWriter) close() {
	d.mu.Lock()
	d.done = true
	d.mu.Unlock()
}
