package jsonrpc

import (
	"encoding/json"

	"github.com/toolgate/toolgate/strictjson"
)

// JSON-RPC and MCP error codes toolgate produces itself.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeUnavailable is returned when the downstream server cannot answer:
	// it crashed, is restarting, or did not answer within its timeout.
	CodeUnavailable = -32000
	// CodeHeaderMismatch is MCP 2026-07-28's answer to Mcp-Method or
	// Mcp-Name headers that disagree with the body.
	CodeHeaderMismatch = -32020
)

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return e.Message }

// ErrorObject encodes a JSON-RPC error object.
func ErrorObject(code int, msg string) json.RawMessage {
	b := make([]byte, 0, len(msg)+32)
	b = append(b, `{"code":`...)
	b, _ = strictjson.AppendCanonical(b, code)
	b = append(b, `,"message":`...)
	b = strictjson.AppendString(b, msg)
	return append(b, '}')
}

// ErrorResponse builds the response to request id carrying an error; a
// missing id answers with null, as JSON-RPC asks for unreadable requests.
func ErrorResponse(id json.RawMessage, code int, msg string) []byte {
	if !HasID(id) {
		id = nil
	}
	return (&Message{ID: id, Error: ErrorObject(code, msg)}).Encode()
}

// ParseError decodes an error object leniently, for messages: a malformed
// one reads as code 0 with its raw text.
func ParseError(raw json.RawMessage) RPCError {
	var e RPCError
	if json.Unmarshal(raw, &e) != nil {
		e = RPCError{Message: string(raw)}
	}
	return e
}
