// Package jsonrpc is the JSON-RPC 2.0 envelope MCP messages travel in,
// parsed strictly (duplicate and case-variant keys refused at every depth,
// as strictjson does) and re-encoded from its parts, so that the method
// and id toolgate routes on are the ones every peer reads. Params, results
// and errors stay raw bytes: only what a caller decides on is parsed
// further (callpipe parses tools/call params).
//
// Trust boundary: ParseMessage takes bytes from an MCP client or server.
// The one part it passes on without the strict rules is the params of a
// tools/call, so that callpipe.ParseCall — the call's one strict parse —
// refuses them and the pipeline audits the refusal; whoever decides on
// those params must parse them with callpipe.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/toolgate/toolgate/strictjson"
)

// Message is one JSON-RPC 2.0 message with every part kept as raw bytes, so
// that what a relay does not need to understand passes on unchanged.
type Message struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
}

// Kind classifies a message by the members it carries.
type Kind int

// The kinds of JSON-RPC message.
const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
)

// Kind reports what m is. A request whose id is null is a notification
// here: it cannot be answered, and callers refuse it where an answer (or
// a decision) is due.
func (m *Message) Kind() Kind {
	switch {
	case m.Method != "" && HasID(m.ID):
		return KindRequest
	case m.Method != "":
		return KindNotification
	case HasID(m.ID) && (m.Result != nil || m.Error != nil):
		return KindResponse
	}
	return KindInvalid
}

// HasID reports whether id is present and not null.
func HasID(id json.RawMessage) bool { return len(id) > 0 && !bytes.Equal(id, []byte("null")) }

// The envelope's members; any other is dropped on re-encoding.
var envelope = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// ParseMessage decodes one JSON-RPC message strictly: one object (no
// batches), "jsonrpc": "2.0", a string method, a string or number id, no
// duplicate or case-variant keys anywhere, and either a method or an id
// with a result or an error. One exception: the params of a tools/call
// are passed on raw even when they break the strict rules, for
// callpipe.ParseCall to refuse (and the pipeline to audit); a caller
// reading the params of a tools/call must parse them strictly itself.
func ParseMessage(b []byte) (*Message, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		if len(b) > 0 && b[0] == '[' {
			return nil, errors.New("JSON-RPC batches are not supported (removed in MCP 2025-06-18); send one message per request")
		}
		return nil, errors.New("not a JSON-RPC message: expected a JSON object")
	}
	members, err := strictjson.Members(b)
	if err != nil {
		if members = callWithBadParams(b); members == nil {
			return nil, fmt.Errorf("not a valid JSON-RPC message: %w", err)
		}
	}
	var m Message
	version := false
	for _, mem := range members {
		switch mem.Key {
		case "jsonrpc":
			if string(mem.Value) != `"2.0"` {
				return nil, errors.New(`not a JSON-RPC 2.0 message: "jsonrpc" must be "2.0"`)
			}
			version = true
		case "id":
			v := mem.Value
			if len(v) == 0 || (v[0] != '"' && v[0] != '-' && (v[0] < '0' || v[0] > '9') && string(v) != "null") {
				return nil, errors.New("a JSON-RPC id must be a string or a number")
			}
			m.ID = v
		case "method":
			if len(mem.Value) == 0 || mem.Value[0] != '"' {
				return nil, errors.New("a JSON-RPC method must be a string")
			}
			if err := decodeString(mem.Value, &m.Method); err != nil {
				return nil, fmt.Errorf("method: %w", err)
			}
			if m.Method == "" {
				return nil, errors.New("a JSON-RPC method must not be empty")
			}
		case "params":
			m.Params = mem.Value
		case "result":
			m.Result = mem.Value
		case "error":
			m.Error = mem.Value
		default:
			for _, k := range envelope {
				if strictjson.FoldKey(k) == strictjson.FoldKey(mem.Key) {
					return nil, fmt.Errorf("JSON-RPC member %q differs only in case from %q; send %q", mem.Key, k, k)
				}
			}
		}
	}
	if !version {
		return nil, errors.New(`not a JSON-RPC 2.0 message: "jsonrpc": "2.0" is missing`)
	}
	if m.Kind() == KindInvalid {
		return nil, errors.New("not a JSON-RPC message: no method, and no id with result or error")
	}
	return &m, nil
}

// decodeString decodes a JSON string already checked under the strict
// rules: its bytes between the quotes when it holds no escape.
func decodeString(v []byte, dst *string) error {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
		*dst = string(v[1 : len(v)-1])
		return nil
	}
	return json.Unmarshal(v, dst)
}

// callWithBadParams reads a tools/call whose envelope holds under the
// strict rules but whose params do not (a duplicate or case-variant key,
// invalid UTF-8, a lone surrogate, at any depth): its members, params
// raw; nil for anything else. Such a call is still a tools/call, so it is
// not refused here, where nobody would audit it and the client would be
// answered without its id: callpipe.ParseCall — the one strict parse of a
// call — refuses it, and the pipeline audits the refusal.
func callWithBadParams(b []byte) []strictjson.Member {
	members, err := strictjson.LaxMembers(b)
	if err != nil {
		return nil
	}
	call := false
	for _, mem := range members {
		if mem.Key == "method" {
			call = string(mem.Value) == `"tools/call"`
		}
	}
	if !call {
		return nil
	}
	for _, mem := range members {
		if mem.Key != "params" && strictjson.Valid(mem.Value) != nil {
			return nil
		}
	}
	return members
}

// Encode writes m as one compact JSON-RPC message. Raw parts are copied
// as they came.
func (m *Message) Encode() []byte { return m.AppendEncode(nil) }

// AppendEncode appends the encoding of m to dst.
func (m *Message) AppendEncode(dst []byte) []byte {
	if dst == nil {
		dst = make([]byte, 0, 40+len(m.ID)+len(m.Method)+len(m.Params)+len(m.Result)+len(m.Error))
	}
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if HasID(m.ID) {
		dst = append(dst, `,"id":`...)
		dst = append(dst, m.ID...)
	} else if m.Method == "" {
		dst = append(dst, `,"id":null`...)
	}
	if m.Method != "" {
		dst = append(dst, `,"method":`...)
		dst = strictjson.AppendString(dst, m.Method)
	}
	if m.Params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, m.Params...)
	}
	if m.Result != nil {
		dst = append(dst, `,"result":`...)
		dst = append(dst, m.Result...)
	}
	if m.Error != nil {
		dst = append(dst, `,"error":`...)
		dst = append(dst, m.Error...)
	}
	return append(dst, '}')
}

// IDKey is a map key for a raw JSON-RPC id: the number 1 and the string
// "1" are different ids, and keeping the raw bytes keeps them apart.
func IDKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// IntID is the raw id of the integer n.
func IntID(n int64) json.RawMessage { return strconv.AppendInt(nil, n, 10) }

// Notification builds a notification message.
func Notification(method string, params []byte) []byte {
	return (&Message{Method: method, Params: params}).Encode()
}

// IsResponseTo reports whether msg is the response to request id, reading
// only its envelope.
func IsResponseTo(msg []byte, id json.RawMessage) bool {
	m, err := ParseMessage(msg)
	return err == nil && m.Kind() == KindResponse && IDKey(m.ID) == IDKey(id)
}

// Quote is s as a raw JSON string.
func Quote(s string) json.RawMessage { return strictjson.AppendString(nil, s) }
