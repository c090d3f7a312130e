package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Message is one JSON-RPC 2.0 message with every part kept as raw bytes, so
// that what the proxy does not need to understand it passes on unchanged.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// Kind classifies a message by the fields it carries.
type Kind int

// The four kinds of JSON-RPC message.
const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
)

// Kind reports what m is.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && hasID(m.ID):
		return KindRequest
	case m.Method != "":
		return KindNotification
	case hasID(m.ID) && (m.Result != nil || m.Error != nil):
		return KindResponse
	}
	return KindInvalid
}

func hasID(id json.RawMessage) bool { return len(id) > 0 && !bytes.Equal(id, []byte("null")) }

// ParseMessage decodes one JSON-RPC message, refusing batches and values
// that are not objects.
func ParseMessage(b []byte) (*Message, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		if len(b) > 0 && b[0] == '[' {
			return nil, errors.New("JSON-RPC batches are not supported (removed in MCP 2025-06-18); send one message per request")
		}
		return nil, errors.New("not a JSON-RPC message: expected a JSON object")
	}
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m.Kind() == KindInvalid {
		return nil, errors.New("not a JSON-RPC message: no method, and no id with result or error")
	}
	return &m, nil
}

// Encode writes m as one compact JSON-RPC message. Raw parts are copied
// as they came.
func (m *Message) Encode() []byte {
	n := 40 + len(m.ID) + len(m.Method) + len(m.Params) + len(m.Result) + len(m.Error)
	b := make([]byte, 0, n)
	b = append(b, `{"jsonrpc":"2.0"`...)
	if hasID(m.ID) {
		b = append(b, `,"id":`...)
		b = append(b, m.ID...)
	}
	if m.Method != "" {
		b = append(b, `,"method":`...)
		b = strconv.AppendQuote(b, m.Method)
	}
	if m.Params != nil {
		b = append(b, `,"params":`...)
		b = append(b, m.Params...)
	}
	if m.Result != nil {
		b = append(b, `,"result":`...)
		b = append(b, m.Result...)
	}
	if m.Error != nil {
		b = append(b, `,"error":`...)
		b = append(b, m.Error...)
	}
	return append(b, '}')
}

// idKey is a map key for a raw JSON-RPC id: the number 1 and the string
// "1" are different ids, and keeping the raw bytes keeps them apart.
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// JSON-RPC and MCP error codes the proxy produces itself.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeUnavailable is returned when the downstream server cannot answer:
	// it crashed, is restarting, or did not answer within its timeout.
	CodeUnavailable = -32000
)

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return e.Message }

// errorJSON encodes a JSON-RPC error object.
func errorJSON(code int, msg string) json.RawMessage {
	b, _ := json.Marshal(RPCError{Code: code, Message: msg})
	return b
}

// ErrorResponse builds the response to request id carrying an error.
func ErrorResponse(id json.RawMessage, code int, msg string) []byte {
	if !hasID(id) {
		id = json.RawMessage("null")
	}
	return (&Message{ID: id, Error: errorJSON(code, msg)}).Encode()
}

// paramsField extracts one top-level field of a params object without
// decoding the rest.
func paramsField(params json.RawMessage, field string) json.RawMessage {
	if len(params) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return nil
	}
	return m[field]
}

// progressToken returns params._meta.progressToken, or nil.
func progressToken(params json.RawMessage) json.RawMessage {
	meta := paramsField(params, "_meta")
	if meta == nil {
		return nil
	}
	return paramsField(meta, "progressToken")
}

// Fields is a JSON object as ordered (key, raw value) pairs, so that one
// member can be replaced while the others keep their bytes and order.
type Fields []Field

// Field is one member of a JSON object.
type Field struct {
	Key   string
	Value json.RawMessage
}

// ParseFields splits a JSON object into its members, in order.
func ParseFields(b []byte) (Fields, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("expected a JSON object")
	}
	var out Fields
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, Field{Key: key, Value: v})
	}
	return out, nil
}

// Get returns the value of key, or nil.
func (f Fields) Get(key string) json.RawMessage {
	for _, kv := range f {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// Set replaces key's value, or appends it.
func (f Fields) Set(key string, v json.RawMessage) Fields {
	for i := range f {
		if f[i].Key == key {
			f[i].Value = v
			return f
		}
	}
	return append(f, Field{Key: key, Value: v})
}

// Encode writes the object back, each value as its raw bytes.
func (f Fields) Encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(kv.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}
