package callpipe

import "github.com/toolgate/toolgate/strictjson"

// ErrorResult is a CallToolResult with isError and one text block: how
// every refusal and every failure reaches the client.
func ErrorResult(text string) []byte {
	b := make([]byte, 0, len(text)+64)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = strictjson.AppendString(b, text)
	return append(b, `}],"isError":true}`...)
}

// TextResult is a successful CallToolResult with one text block.
func TextResult(text string) []byte {
	b := make([]byte, 0, len(text)+48)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = strictjson.AppendString(b, text)
	return append(b, `}]}`...)
}
