package callpipe

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/toolgate/toolgate/strictjson"
)

// The members of tools/call params toolgate reads (MCP 2025-11-25 and
// 2026-07-28): the tool, its arguments, request metadata, the tasks
// extension's task parameters, and a multi round-trip retry's input
// responses and request state. Nothing else is forwarded.
const (
	fieldName           = "name"
	fieldArguments      = "arguments"
	fieldMeta           = "_meta"
	fieldTask           = "task"
	fieldInputResponses = "inputResponses"
	fieldRequestState   = "requestState"
)

var callFields = []string{fieldName, fieldArguments, fieldMeta, fieldTask, fieldInputResponses, fieldRequestState}

// Call is one tools/call, parsed once and strictly: the only form of the
// request that is decided, digested for approvals, audited and executed.
// It is immutable once parsed.
type Call struct {
	// Name is the tool's name as the client sent it.
	Name string
	// Args are the arguments (never nil); numbers are json.Number holding
	// the literal text the client sent.
	Args map[string]any
	// ArgsJSON is the canonical encoding of Args (strictjson), which is
	// what a downstream server receives.
	ArgsJSON []byte
	// Digest is the SHA-256 (hex) of ArgsJSON; approvals bind to it.
	Digest string
	// Meta is params._meta, nil when absent.
	Meta map[string]any
	// Task is the tasks extension's params.task, nil when absent.
	Task map[string]any
	// InputResponses and RequestState belong to a multi round-trip retry;
	// nil / "" when absent. RequestState passes downstream untouched.
	InputResponses map[string]any
	RequestState   string
	hasState       bool
}

// CallError is why a tools/call could not be parsed; its text is what the
// client is told after "DENIED: malformed tools/call: ".
type CallError struct{ Msg string }

func (e *CallError) Error() string { return e.Msg }

func callErrorf(format string, args ...any) *CallError {
	return &CallError{Msg: fmt.Sprintf(format, args...)}
}

// ParseCall parses tools/call params. It refuses, at every depth,
// duplicate keys and keys that differ only in case (strictjson), a member
// that differs only in case from a known one ("Name", "Arguments"), a name
// that is not a non-empty string, and arguments that are not an object.
// Unknown members are dropped: they are neither decided nor forwarded.
func ParseCall(params []byte) (*Call, error) {
	if len(params) == 0 {
		return nil, callErrorf("tools/call has no params; send {\"name\": …, \"arguments\": {…}}")
	}
	v, err := strictjson.Parse(params)
	if err != nil {
		return nil, callErrorf("params: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, callErrorf("params must be an object, not %s", strictjson.Kind(v))
	}
	for k := range m {
		if known(k) {
			continue
		}
		for _, f := range callFields {
			if strictjson.FoldKey(k) == strictjson.FoldKey(f) {
				return nil, callErrorf("params member %q differs only in case from %q; send %q", k, f, f)
			}
		}
	}
	c := &Call{}
	name, present := m[fieldName]
	if !present {
		return nil, callErrorf("params.name is missing; name the tool to call")
	}
	if c.Name, ok = name.(string); !ok {
		return nil, callErrorf("params.name must be a string, not %s", strictjson.Kind(name))
	}
	if c.Name == "" {
		return nil, callErrorf("params.name is empty; name the tool to call")
	}
	switch a := m[fieldArguments].(type) {
	case nil:
		// Absent or null: no arguments (what Go clients send for none).
		c.Args = map[string]any{}
	case map[string]any:
		c.Args = a
	default:
		return nil, callErrorf("params.arguments must be an object, not %s", strictjson.Kind(a))
	}
	if c.Meta, err = optionalObject(m, fieldMeta); err != nil {
		return nil, err
	}
	if c.Task, err = optionalObject(m, fieldTask); err != nil {
		return nil, err
	}
	if c.InputResponses, err = optionalObject(m, fieldInputResponses); err != nil {
		return nil, err
	}
	if s, present := m[fieldRequestState]; present {
		if c.RequestState, ok = s.(string); !ok {
			return nil, callErrorf("params.requestState must be a string, not %s", strictjson.Kind(s))
		}
		c.hasState = true
	}
	c.ArgsJSON, _ = strictjson.Canonical(c.Args)
	sum := sha256.Sum256(c.ArgsJSON)
	c.Digest = hex.EncodeToString(sum[:])
	return c, nil
}

func known(k string) bool {
	for _, f := range callFields {
		if k == f {
			return true
		}
	}
	return false
}

func optionalObject(m map[string]any, field string) (map[string]any, error) {
	v, present := m[field]
	if !present {
		return nil, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, callErrorf("params.%s must be an object, not %s", field, strictjson.Kind(v))
	}
	return o, nil
}

// Params is the tools/call params to forward: built from the parsed call
// only, in canonical form, never from the bytes the client sent.
func (c *Call) Params() []byte { return c.AppendParams(nil, c.Meta) }

// AppendParams appends the params to forward with meta in place of the
// call's own _meta (a proxy rewrites a progress token or adds trace
// context there; nil omits it).
func (c *Call) AppendParams(dst []byte, meta map[string]any) []byte {
	// Members in byte order of their keys, as the canonical form orders them.
	dst = append(dst, '{')
	if meta != nil {
		dst = append(dst, `"_meta":`...)
		dst, _ = strictjson.AppendCanonical(dst, meta)
		dst = append(dst, ',')
	}
	dst = append(dst, `"arguments":`...)
	dst = append(dst, c.ArgsJSON...)
	if c.InputResponses != nil {
		dst = append(dst, `,"inputResponses":`...)
		dst, _ = strictjson.AppendCanonical(dst, c.InputResponses)
	}
	dst = append(dst, `,"name":`...)
	dst = strictjson.AppendString(dst, c.Name)
	if c.hasState {
		dst = append(dst, `,"requestState":`...)
		dst = strictjson.AppendString(dst, c.RequestState)
	}
	if c.Task != nil {
		dst = append(dst, `,"task":`...)
		dst, _ = strictjson.AppendCanonical(dst, c.Task)
	}
	return append(dst, '}')
}

// ParamsSizeHint is about the size of what AppendParams appends, for
// sizing its buffer once.
func (c *Call) ParamsSizeHint() int {
	return len(c.ArgsJSON) + len(c.Name) + len(c.RequestState) + 128
}

// MetaString returns _meta[key] when it is a string.
func (c *Call) MetaString(key string) string {
	s, _ := c.Meta[key].(string)
	return s
}

// ProgressToken returns _meta.progressToken (a string or a json.Number),
// nil when the client asked for no progress.
func (c *Call) ProgressToken() any {
	if c == nil || c.Meta == nil {
		return nil
	}
	return c.Meta["progressToken"]
}

// ApprovalInputKey is the inputRequests key under which toolgate asks the
// caller's own user to approve a held call (2026-07-28 MRTR).
const ApprovalInputKey = "toolgate/approval"

// ownInput splits off the part of a multi round-trip retry that answers
// toolgate itself — its sealed requestState and the user's answer under
// ApprovalInputKey — and returns the call as the downstream must see it,
// without them. A call carrying the server's own state is returned as is.
func (c *Call) ownInput() (call *Call, state string, answer any) {
	if !c.hasState || !IsOwnState(c.RequestState) {
		return c, "", nil
	}
	cp := *c
	cp.RequestState, cp.hasState = "", false
	answer = c.InputResponses[ApprovalInputKey]
	if len(c.InputResponses) > 0 {
		rest := make(map[string]any, len(c.InputResponses))
		for k, v := range c.InputResponses {
			if k != ApprovalInputKey {
				rest[k] = v
			}
		}
		cp.InputResponses = rest
		if len(rest) == 0 {
			cp.InputResponses = nil
		}
	}
	return &cp, c.RequestState, answer
}
