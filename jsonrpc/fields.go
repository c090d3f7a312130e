package jsonrpc

import (
	"encoding/json"

	"github.com/toolgate/toolgate/strictjson"
)

// Fields is a JSON object as ordered (key, raw value) pairs, so that one
// member can be replaced while the others keep their bytes and order.
type Fields []strictjson.Member

// ParseFields splits a JSON object into its members, in order, under the
// strict rules.
func ParseFields(b []byte) (Fields, error) {
	m, err := strictjson.Members(b)
	return Fields(m), err
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
	return append(f, strictjson.Member{Key: key, Value: v})
}

// Delete removes key.
func (f Fields) Delete(key string) Fields {
	for i := range f {
		if f[i].Key == key {
			return append(f[:i:i], f[i+1:]...)
		}
	}
	return f
}

// Encode writes the object back, each value as its raw bytes.
func (f Fields) Encode() json.RawMessage {
	n := 2
	for _, kv := range f {
		n += len(kv.Key) + len(kv.Value) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, kv := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = strictjson.AppendString(b, kv.Key)
		b = append(b, ':')
		b = append(b, kv.Value...)
	}
	return append(b, '}')
}

// Field extracts one top-level member of a JSON object without decoding
// the rest; nil when absent or when b is not an object. In an object that
// breaks the strict rules elsewhere (only a tools/call's params reach a
// caller so, for callpipe to refuse), the member is still returned when
// it is unambiguous — no duplicate, no case variant beside it — and its
// value holds under the strict rules: transports read _meta and the name
// of such a call to route it to the pipeline that refuses and audits it.
func Field(b json.RawMessage, key string) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if v, found, err := strictjson.Lookup(b, key); err == nil {
		if !found {
			return nil
		}
		return v
	}
	members, err := strictjson.ScanMembers(b)
	if err != nil {
		return nil
	}
	var found json.RawMessage
	fold := strictjson.FoldKey(key)
	for _, m := range members {
		if strictjson.FoldKey(m.Key) != fold {
			continue
		}
		if found != nil || m.Key != key {
			return nil // ambiguous
		}
		found = m.Value
	}
	if found == nil || strictjson.Valid(found) != nil {
		return nil
	}
	return found
}
