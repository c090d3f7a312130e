// Package audit writes and checks toolgate's audit trail: one JSON line per
// decision, hash-chained so that any edit, removal or reordering of a line is
// detected, and safe for several processes appending to the same file.
//
// The package knows nothing about secrets: Append writes the event as given,
// so callers redact credential values before appending.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// DefaultFile is the audit log's file name when the workspace does not set
// gateway.audit.path; relative paths resolve against the workspace's directory.
const DefaultFile = "audit.jsonl"

// GenesisPrev is the prev value of the first event (seq 1): there is no
// previous line, so the chain starts from the empty string.
const GenesisPrev = ""

// Event is one audit line. Its JSON field names and order are the on-disk
// format of docs/security.md; hash is always the last field because it is the
// SHA-256 of the line's bytes without it.
type Event struct {
	// Seq numbers the events of one file from 1 without gaps; Append assigns it.
	Seq int64 `json:"seq"`
	// Time is when the decision was made, written as RFC 3339 (nanoseconds) in
	// UTC; Append fills it when zero.
	Time time.Time `json:"time"`
	// Agent is the identity the call was made under.
	Agent string `json:"agent"`
	// Action is a label for people (mcp:call:{server}:{tool} or
	// command:call:{pack}:{command}); queries use Payload instead.
	Action string `json:"action"`
	// Decision is allow, approval or deny, and later outcomes such as approved
	// or expired; it stays a string so new outcomes need no format change.
	Decision string `json:"decision"`
	// Reason says why the decision was made.
	Reason string `json:"reason"`
	// Tier is the permission tier that decided (open, cautious, strict, readonly).
	Tier string `json:"tier"`
	// Payload identifies the tool structurally, so no query parses Action.
	Payload Payload `json:"payload"`
	// ArgsSHA256 is ArgsDigest of the call's arguments; approvals bind to it.
	ArgsSHA256 string `json:"args_sha256"`
	// Arguments are the call's arguments with every credential redacted,
	// on decision events only and only under gateway.audit.arguments:
	// redacted (the default records the digest alone).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Argv is the command line a pack command ran with (already redacted).
	Argv []string `json:"argv,omitempty"`
	// Exit is the command's exit status, when one ran.
	Exit *int `json:"exit,omitempty"`
	// DurationMS is how long execution took, when something executed.
	DurationMS *int64 `json:"duration_ms,omitempty"`
	// OutputBytes is how much output execution produced.
	OutputBytes *int64 `json:"output_bytes,omitempty"`
	// Truncated reports whether the output was cut at the output cap.
	Truncated *bool `json:"truncated,omitempty"`
	// Error describes an execution failure (timeout, spawn error, downstream
	// error); empty when execution succeeded or did not happen.
	Error string `json:"error,omitempty"`
	// Of is the seq of the decision event an outcome event belongs to
	// (write-ahead: the decision is recorded before anything runs, its
	// outcome after, docs/security.md); absent on decision events.
	Of *int64 `json:"of,omitempty"`
	// Revision is the workspace revision that decided.
	Revision string `json:"revision,omitempty"`
	// TraceID is the trace id of the request, when it carried trace context.
	TraceID string `json:"trace_id,omitempty"`
	// Approval describes the approval the call used; JSON null when none. It is
	// raw JSON so the audit format does not depend on the approvals package.
	Approval json.RawMessage `json:"approval"`
	// Checkpoint is set only on signed checkpoint events (Decision
	// DecisionCheckpoint): a signature over the seq and hash of the line
	// before it.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// Prev is the previous line's Hash (GenesisPrev for seq 1); Append assigns it.
	Prev string `json:"prev"`
	// Hash is the SHA-256 (hex) of this line without its hash field; Append
	// assigns it.
	Hash string `json:"hash,omitempty"`
}

// Payload carries the structured identity of the tool a decision was about.
type Payload struct {
	// Provider is "mcp" for a proxied server tool or "command" for a pack command.
	Provider string `json:"provider"`
	// Container is the MCP server id or the command pack id.
	Container string `json:"container"`
	// Member is the tool or command name.
	Member string `json:"member"`
	// Effects is the declared effect (read or write) the tier decided on.
	Effects string `json:"effects"`
}

// ArgsDigest returns the SHA-256 (hex) of the canonical JSON of args. The
// canonical form is what encoding/json produces for a map[string]any: keys
// sorted byte-wise at every level, no insignificant whitespace, and the
// default escaping of <, > and &. Arguments decoded from a JSON request
// therefore digest the same however the client ordered or spaced them, which
// is what lets an approval bind to "this exact call". A nil map digests as
// the empty object {}.
func ArgsDigest(args map[string]any) string {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		// Arguments decoded from JSON always marshal; anything else (a channel,
		// a NaN) cannot be canonicalised, and must not collide with a real digest.
		b = []byte(fmt.Sprintf("unencodable arguments: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// hashField is the text between an event's body and its 64 hex digits.
const hashField = `,"hash":"`

// hashSuffixLen is the length of `,"hash":"<64 hex>"}` at the end of a line.
const hashSuffixLen = len(hashField) + sha256.Size*2 + len(`"}`)

// lineHash checks that line (without its newline) ends with a hash field and
// that the hash matches the bytes before it. It returns the stored hash; ok
// is false when the field is missing or malformed, match is false when the
// content was changed after hashing.
func lineHash(line []byte) (stored string, ok, match bool) {
	n := len(line)
	if n < hashSuffixLen+1 || line[0] != '{' {
		return "", false, false
	}
	suffix := line[n-hashSuffixLen:]
	if !bytes.HasPrefix(suffix, []byte(hashField)) || !bytes.HasSuffix(suffix, []byte(`"}`)) {
		return "", false, false
	}
	hexDigits := suffix[len(hashField) : len(suffix)-2]
	var want [sha256.Size]byte
	if _, err := hex.Decode(want[:], hexDigits); err != nil || bytes.ContainsAny(hexDigits, "ABCDEF") {
		return "", false, false
	}
	h := sha256.New()
	h.Write(line[:n-hashSuffixLen])
	h.Write([]byte("}"))
	return string(hexDigits), true, bytes.Equal(h.Sum(nil), want[:])
}
