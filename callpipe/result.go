package callpipe

import "github.com/toolgate/toolgate/strictjson"

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
	if r.Structured != nil {
		b = append(b, `,"structuredContent":`...)
		var ok bool
		if b, ok = strictjson.AppendCompact(b, r.Structured); !ok {
			return ErrorResult("the tool's structured result holds a value that is not JSON (a NaN or infinite number, or a Go type); nothing was returned")
		}
	}
	return append(b, '}')
}

// ErrorResult is a CallToolResult with isError and one text block: how
// every refusal and every failure reaches the client.
func ErrorResult(text string) []byte { return ToolResult{Text: text, IsError: true}.JSON() }

// TextResult is a successful CallToolResult with one text block.
func TextResult(text string) []byte { return ToolResult{Text: text}.JSON() }
