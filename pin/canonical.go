// Package pin pins tool definitions (docs/deploy.md, "pinned tools"): the SHA-256 of each
// tool's canonical definition, the toolgate.lock file that records them,
// and the comparison of a live listing against it. A tool whose live
// definition differs from its pin, or that was never pinned, is not served.
package pin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/strictjson"
)

// definitionFields are the members of an MCP tool that its pin covers: all
// that reaches the model or decides how it is called. Others (icons, _meta,
// execution) may change without unpinning the tool.
var definitionFields = []string{"annotations", "description", "inputSchema", "name", "outputSchema", "title"}

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

// Tool is one pinned tool: its name, the digest of its definition and
// the canonical definition itself (nil where it is not known).
type Tool struct {
	Name       string
	Digest     Digest
	Definition json.RawMessage
}

// digestOf is the digest of canonical definition bytes.
func digestOf(canon []byte) Digest {
	sum := sha256.Sum256(canon)
	return Digest(digestPrefix + hex.EncodeToString(sum[:]))
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
	return Tool{Name: name, Digest: digestOf(canon), Definition: canon}, nil
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
// the definition fields present in raw, as one JSON object in the
// project's one canonical form (strictjson: keys sorted at every level, no
// insignificant whitespace, numbers by their literal text). raw is parsed
// strictly: a duplicate or case-variant key at any depth, invalid UTF-8 or
// trailing data is refused. It also returns the tool's name.
func CanonicalDefinition(raw json.RawMessage) ([]byte, string, error) {
	obj, err := strictjson.ParseObject(raw)
	if err != nil {
		return nil, "", fmt.Errorf("tool definition: %w", err)
	}
	def := make(map[string]any, len(definitionFields))
	for _, k := range definitionFields {
		if v, ok := obj[k]; ok {
			def[k] = v
		}
	}
	rawName, present := obj["name"]
	name, isString := rawName.(string)
	if present && !isString {
		return nil, "", errors.New("tool definition: name is not a string")
	}
	if name == "" {
		return nil, "", errors.New("tool definition: no name")
	}
	canon, ok := strictjson.Canonical(def)
	if !ok {
		return nil, name, errors.New("tool definition: cannot be encoded canonically")
	}
	return canon, name, nil
}
