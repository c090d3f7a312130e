package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// The conformance suite's own reference server (everything-server.ts in
// the conformance repository) differs from mcp-go in two ways a proxy in
// front of it must cope with, which flag -like-reference models on top of
// the both-era server:
//   - its server/discover (and its UnsupportedProtocolVersionError) lists
//     only 2026-07-28, while the same endpoint serves initialize with
//     2025-11-25 (a session-era client is served
//     in its own era: a proxy must not take the list for the whole truth);
//   - it answers subscriptions/listen with Content-Type application/json
//     and keeps the body open, writing one JSON message a line (the
//     acknowledgement, then each change), where mcp-go writes an SSE
//     stream (a proxy must relay each line as it comes).
//
// Both are done by rewriting what mcp-go writes, so the messages
// themselves (filter, subscription ids, capabilities) stay mcp-go's.

// listOnlyModern is msg with the versions it lists cut to 2026-07-28, as
// the reference server lists them: a DiscoverResult's supportedVersions
// and an UnsupportedProtocolVersionError's data.supported (the suite
// checks that the two agree). Any other message is returned unchanged.
func listOnlyModern(msg []byte) []byte {
	var m map[string]json.RawMessage
	if !bytes.Contains(msg, []byte(`"supported`)) || json.Unmarshal(msg, &m) != nil {
		return msg
	}
	modern, _ := json.Marshal(modernVersions())
	var e struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(m["error"], &e)
	if res, ok := replaceMember(m["result"], modern, "supportedVersions"); ok {
		m["result"] = res
	} else if eo, ok := replaceMember(m["error"], modern, "data", "supported"); ok && e.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION {
		m["error"] = eo
	} else {
		return msg
	}
	out, _ := json.Marshal(m)
	return out
}

// replaceMember is the JSON object obj with the member at path set to v;
// false when obj has nothing there.
func replaceMember(obj, v json.RawMessage, path ...string) (json.RawMessage, bool) {
	var o map[string]json.RawMessage
	if json.Unmarshal(obj, &o) != nil || o[path[0]] == nil {
		return nil, false
	}
	if len(path) == 1 {
		o[path[0]] = v
	} else {
		inner, ok := replaceMember(o[path[0]], v, path[1:]...)
		if !ok {
			return nil, false
		}
		o[path[0]] = inner
	}
	out, _ := json.Marshal(o)
	return out, true
}

// discoverRewriter holds an HTTP answer (to server/discover, or to a
// request of a version the server refuses), to write it with
// listOnlyModern applied (to the body, or to each data line of an
// SSE answer).
type discoverRewriter struct {
	w      http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (d *discoverRewriter) Header() http.Header         { return d.w.Header() }
func (d *discoverRewriter) WriteHeader(status int)      { d.status = status }
func (d *discoverRewriter) Write(p []byte) (int, error) { return d.body.Write(p) }

// finish writes the held answer, rewritten.
func (d *discoverRewriter) finish() {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	var out []byte
	if strings.HasPrefix(d.w.Header().Get("Content-Type"), "text/event-stream") {
		for _, line := range bytes.SplitAfter(d.body.Bytes(), []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				line = append(append([]byte("data: "), listOnlyModern(bytes.TrimRight(data, "\r\n"))...), '\n')
			}
			out = append(out, line...)
		}
	} else {
		out = listOnlyModern(bytes.TrimSpace(d.body.Bytes()))
	}
	d.w.Header().Del("Content-Length")
	d.w.WriteHeader(d.status)
	_, _ = d.w.Write(out)
}

// ndjsonWriter turns an SSE answer into newline-delimited JSON under
// Content-Type application/json, a line per event as it is written
// (flushed), the body kept open as long as the handler keeps the stream.
// A non-SSE answer passes unchanged.
type ndjsonWriter struct {
	w       http.ResponseWriter
	flusher http.Flusher
	started bool
	sse     bool
	pending []byte
}

func newNDJSONWriter(w http.ResponseWriter) *ndjsonWriter {
	f, _ := w.(http.Flusher)
	return &ndjsonWriter{w: w, flusher: f}
}

func (n *ndjsonWriter) Header() http.Header { return n.w.Header() }

func (n *ndjsonWriter) WriteHeader(status int) {
	if n.started {
		return
	}
	n.started = true
	if strings.HasPrefix(n.w.Header().Get("Content-Type"), "text/event-stream") {
		n.sse = true
		n.w.Header().Set("Content-Type", "application/json")
	}
	n.w.WriteHeader(status)
}

func (n *ndjsonWriter) Write(p []byte) (int, error) {
	n.WriteHeader(http.StatusOK)
	if !n.sse {
		return n.w.Write(p)
	}
	n.pending = append(n.pending, p...)
	for {
		i := bytes.IndexByte(n.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := bytes.TrimRight(n.pending[:i], "\r")
		n.pending = n.pending[i+1:]
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if data = bytes.TrimSpace(data); len(data) > 0 {
				if _, err := n.w.Write(append(append([]byte(nil), data...), '\n')); err != nil {
					return 0, err
				}
			}
		}
	}
}

// Flush implements http.Flusher: each line reaches the client as written.
func (n *ndjsonWriter) Flush() {
	if n.flusher != nil {
		n.flusher.Flush()
	}
}

// likeReference wraps w for the answer to msg (a POST body) as the
// reference server would write it; done must run once the handler
// returned.
func (g guard) likeReference(w http.ResponseWriter, msg []byte) (http.ResponseWriter, func()) {
	if !g.likeRef {
		return w, func() {}
	}
	var req guardedRequest
	_ = json.Unmarshal(msg, &req)
	v := metaVersion(req)
	switch {
	case req.Method == string(mcp.MethodServerDiscover) || (v != "" && !slices.Contains(modernVersions(), v)):
		// The DiscoverResult, or the refusal of a version: their lists.
		d := &discoverRewriter{w: w}
		return d, d.finish
	case req.Method == "subscriptions/listen":
		return newNDJSONWriter(w), func() {}
	}
	return w, func() {}
}

// stdioLikeReference rewrites what the server writes on stdout as the
// reference server would (its DiscoverResult lists only 2026-07-28; over
// stdio every message is a line already).
func (g guard) stdioLikeReference(out io.Writer) io.Writer {
	if !g.likeRef {
		return out
	}
	return &lineRewriter{w: out}
}

// lineRewriter applies listOnlyModern to each line written through it.
type lineRewriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

func (l *lineRewriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, p...)
	for {
		i := bytes.IndexByte(l.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		out := append(listOnlyModern(bytes.TrimRight(l.pending[:i], "\r")), '\n')
		l.pending = l.pending[i+1:]
		if _, err := l.w.Write(out); err != nil {
			return 0, err
		}
	}
}
