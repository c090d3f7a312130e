// Package pin pins tool definitions (DESIGN §13): the SHA-256 of each
// tool's canonical definition, the toolgate.lock file that records them,
// and the comparison of a live listing against it. A tool whose live
// definition differs from its pin, or that was never pinned, is not served.
package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// DefinitionFields are the members of an MCP tool that its pin covers: all
// that reaches the model or decides how it is called. Others (icons, _meta,
// execution) may change without unpinning the tool.
var definitionFields = []string{"annotations", "description", "inputSchema", "name", "outputSchema", "title"}

// DefinitionFields returns the tool members a pin covers, sorted.
func DefinitionFields() []string { return slices.Clone(definitionFields) }

// maxDepth bounds nesting in a definition, so a hostile schema cannot make
// canonicalisation recurse without end.
const maxDepth = 128

// Digest is "sha256:" and the hex SHA-256 of a canonical definition.
type Digest string

const digestPrefix = "sha256:"

// Valid reports whether d has the form of a digest.
func (d Digest) Valid() bool {
	h, ok := strings.CutPrefix(string(d), digestPrefix)
	if !ok || len(h) != sha256.Size*2 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Tool is one pinned tool: its name and the digest of its definition.
type Tool struct {
	Name   string
	Digest Digest
}

// DigestTool returns the pin of one tool as a server listed it (the raw
// JSON object of one element of tools/list's "tools"). A definition with a
// duplicate key at any level is refused: two readers could see two
// different tools in it.
func DigestTool(raw json.RawMessage) (Tool, error) {
	canon, name, err := CanonicalDefinition(raw)
	if err != nil {
		return Tool{Name: name}, err
	}
	sum := sha256.Sum256(canon)
	return Tool{Name: name, Digest: Digest(digestPrefix + hex.EncodeToString(sum[:]))}, nil
}

// DigestList pins every tool of a tools/list result ({"tools": [...]}).
// A tool that cannot be pinned is returned with an empty Digest and its
// error in errs (keyed by name, or by "#index" when it has none).
func DigestList(result json.RawMessage) (tools []Tool, errs map[string]error, err error) {
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(result, &list); err != nil {
		return nil, nil, fmt.Errorf("tools/list result: %w", err)
	}
	for i, raw := range list.Tools {
		t, err := DigestTool(raw)
		if err != nil {
			if errs == nil {
				errs = map[string]error{}
			}
			key := t.Name
			if key == "" {
				key = fmt.Sprintf("#%d", i)
			}
			errs[key] = err
			t.Digest = ""
		}
		tools = append(tools, t)
	}
	return tools, errs, nil
}

// CanonicalDefinition returns the canonical bytes a pin is the digest of:
// the definition fields present in raw, as one JSON object with keys
// sorted (by bytes) at every level, no insignificant whitespace, numbers by
// their literal text, strings re-escaped one way. It also returns the name.
func CanonicalDefinition(raw json.RawMessage) ([]byte, string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, "", fmt.Errorf("tool definition: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, "", errors.New("tool definition: not a JSON object")
	}
	fields := map[string][]byte{}
	var name string
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, name, fmt.Errorf("tool definition: %w", err)
		}
		key := kt.(string)
		var buf bytes.Buffer
		if err := canonValue(dec, &buf, 1); err != nil {
			return nil, name, fmt.Errorf("tool definition %q: %w", key, err)
		}
		if !slices.Contains(definitionFields, key) {
			continue
		}
		if _, dup := fields[key]; dup {
			return nil, name, fmt.Errorf("tool definition: duplicate key %q", key)
		}
		fields[key] = buf.Bytes()
		if key == "name" {
			if err := json.Unmarshal(buf.Bytes(), &name); err != nil {
				return nil, "", errors.New("tool definition: name is not a string")
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, name, fmt.Errorf("tool definition: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, name, errors.New("tool definition: data after the object")
	}
	if name == "" {
		return nil, "", errors.New("tool definition: no name")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	first := true
	for _, k := range definitionFields { // already sorted
		v, ok := fields[k]
		if !ok {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		writeString(&out, k)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), name, nil
}

// canonValue writes the next value of dec canonically.
func canonValue(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return canonObject(dec, out, depth)
		case '[':
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := canonValue(dec, out, depth+1); err != nil {
					return err
				}
			}
			_, err := dec.Token()
			out.WriteByte(']')
			return err
		}
		return fmt.Errorf("unexpected %q", v)
	case string:
		writeString(out, v)
	case json.Number:
		out.WriteString(string(v))
	case bool:
		if v {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}

func canonObject(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	type member struct {
		key string
		val []byte
	}
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key := kt.(string)
		if seen[key] {
			return fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var buf bytes.Buffer
		if err := canonValue(dec, &buf, depth+1); err != nil {
			return err
		}
		members = append(members, member{key, buf.Bytes()})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		writeString(out, m.key)
		out.WriteByte(':')
		out.Write(m.val)
	}
	out.WriteByte('}')
	return nil
}

// writeString escapes only what JSON requires: quote, backslash and
// control characters (short forms where JSON has them, else \u00XX);
// everything else is written as UTF-8. Invalid UTF-8 was already replaced
// by U+FFFD when decoding.
func writeString(out *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	out.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			out.WriteString(`\"`)
		case r == '\\':
			out.WriteString(`\\`)
		case r == '\n':
			out.WriteString(`\n`)
		case r == '\r':
			out.WriteString(`\r`)
		case r == '\t':
			out.WriteString(`\t`)
		case r == '\b':
			out.WriteString(`\b`)
		case r == '\f':
			out.WriteString(`\f`)
		case r < 0x20:
			out.WriteString(`\u00`)
			out.WriteByte(hexDigits[r>>4])
			out.WriteByte(hexDigits[r&0xf])
		default:
			out.WriteString(s[i : i+size])
		}
		i += size
	}
	out.WriteByte('"')
}
