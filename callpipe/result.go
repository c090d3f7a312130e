package callpipe

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/strictjson"
)

// Every CallToolResult toolgate builds itself — a refusal, a failure, a
// pack command's output, a job tool's answer — is encoded here, once, for
// every surface and era. Strings go through strictjson with <, > and & as
// they are (no HTML escaping), so the bytes a command printed reach the
// client as printed; a proxied server's own results are never re-encoded.

// ToolResult is a CallToolResult with one text block, isError, and a
// structuredContent object when Structured is set. Structured holds JSON
// values as a decoder gives them (map[string]any, []any, json.Number,
// string, bool, nil) or as Go builds them (float64, int, int64).
type ToolResult struct {
	Text       string
	IsError    bool
	Structured map[string]any
}

// JSON encodes r with its members in the order encoding/json writes a
// map's (content, isError, structuredContent). A Structured value of
// another type cannot be encoded: the result is then an error result
// saying so, never a half-written document.
func (r ToolResult) JSON() []byte {
	b := make([]byte, 0, len(r.Text)+64)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = strictjson.AppendStringNoHTML(b, r.Text)
	b = append(b, `}]`...)
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if r.Structured == nil {
		r.Structured = scalarStructured(r.Text)
	}
	if r.Structured != nil {
		b = append(b, `,"structuredContent":`...)
		var ok bool
		if b, ok = strictjson.AppendCompact(b, r.Structured); !ok {
			return ErrorResult("the tool's structured result holds a value that is not JSON (a NaN or infinite number, or a Go type); nothing was returned")
		}
	}
	return append(b, '}')
}

// scalarStructured is the structuredContent of a result without one whose
// text is exactly one JSON value other than an object (a string, number,
// boolean, null or array, as jq prints them): {"result": value}. Gemini
// CLI and its forks (packages/core/src/tools/mcp-compliance-transport.ts,
// fixStructuredContent) set a missing structuredContent to JSON.parse of
// the first text block, and the MCP SDK's CallToolResultSchema then
// rejects anything but an object ("structuredContent: expected record,
// received string"): an object there keeps the harness's own guess out.
// The text is unchanged, and a tool without an outputSchema may carry
// structuredContent; nil for any other text.
func scalarStructured(text string) map[string]any {
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	if i == len(text) {
		return nil
	}
	switch c := text[i]; {
	case c == 't' || c == 'f' || c == 'n':
		// Only the literal itself, without decoding: most text starting
		// with these letters is words.
		switch strings.TrimRight(text[i:], " \t\n\r") {
		case "true":
			return map[string]any{"result": true}
		case "false":
			return map[string]any{"result": false}
		case "null":
			return map[string]any{"result": nil}
		}
		return nil
	case c == '"' || c == '[' || c == '-' || (c >= '0' && c <= '9'):
	default:
		return nil // an object, or not JSON
	}
	data := []byte(text)
	if !json.Valid(data) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return map[string]any{"result": v}
}

// ErrorResult is a CallToolResult with isError and one text block: how
// every refusal and every failure reaches the client.
func ErrorResult(text string) []byte { return ToolResult{Text: text, IsError: true}.JSON() }

// TextResult is a successful CallToolResult with one text block.
func TextResult(text string) []byte { return ToolResult{Text: text}.JSON() }
