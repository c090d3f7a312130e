package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Result is what one run produced, with every credential value already
// redacted. A command that ran and failed is a Result (ExitCode, StderrTail,
// Err), not a Go error; Go errors are for commands that could not start.
type Result struct {
	// Argv is the argv that ran, redacted.
	Argv []string
	// ExitCode is the process's exit status; -1 when it was killed by a
	// signal (timeout, cancellation, output cap).
	ExitCode int
	// Stdout is at most Invocation.MaxOutput bytes of standard output;
	// empty for write_to commands, whose output went to the file.
	Stdout []byte
	// StderrTail is the last StderrTailBytes of standard error.
	StderrTail string
	// Structured is stdout decoded as JSON (numbers as json.Number) when
	// the command asked for parse: json and the output parsed.
	Structured any
	// ParseNote says why output asked to be JSON is returned as text.
	ParseNote string
	// StructuredContent is the MCP structuredContent of a parse: json
	// command that exited 0: always a JSON object (see StructuredObject);
	// nil for text commands and failed runs.
	StructuredContent map[string]any
	// Truncated is true when stdout passed the cap and the process group
	// was stopped; CutBytes counts what was read past the cap before it
	// died (at least that much more was printed).
	Truncated bool
	CutBytes  int64
	// OutputBytes is every stdout byte read, kept or cut.
	OutputBytes int64
	// WrittenTo is the file replaced by a successful write_to command.
	WrittenTo string
	// Duration is the wall time from start until the group was gone.
	Duration time.Duration
	// TimedOut is true when the timeout stopped the process group.
	TimedOut bool
	// MaxMemory is the address-space bound the command ran under (bytes;
	// 0: none). PeakRSS is the command's peak resident set as the kernel
	// reported it (0: unknown).
	MaxMemory, PeakRSS int64
	// Killed counts processes the command started that were still running
	// when it ended (or was stopped) and were killed with it; Detached
	// counts those of them that had left its process group (setsid).
	Killed, Detached int
	// Bound lists the path_within arguments the command received as open
	// descriptors, for the audit.
	Bound []BoundPath
	// Err summarises why the run did not succeed; "" on success.
	Err string
}

// fill copies how the run ended into the result.
func (r *Result) fill(ex exitInfo, inv *Invocation) {
	r.ExitCode = ex.code
	r.PeakRSS = ex.maxRSS
	r.MaxMemory = inv.MaxMemory
	r.Killed, r.Detached = ex.killed, ex.outside
	r.Bound = inv.Bound
}

// OK reports whether the command ran to completion with exit status 0 and
// nothing was cut or left undone.
func (r *Result) OK() bool { return r.Err == "" }

// OutputSchema is the outputSchema a parse: json command declares: MCP
// requires structuredContent to be a JSON object, and StructuredObject
// makes every result one, so an object schema matches them all.
const OutputSchema = `{"type":"object","description":"The command's JSON output. A JSON object is returned as printed; any other JSON value (array, string, number, boolean, null) as {\"result\": value}; output that could not be parsed as JSON as {\"result\": null, \"unparsed\": \"why\"}, with the output itself in the text content."}`

// StructuredObject is the structuredContent for a decoded JSON value:
// MCP requires a JSON object (clients such as Gemini CLI, OpenCode and the
// TypeScript SDK reject anything else), so an object is returned as is and
// any other value, null included, as {"result": value}.
func StructuredObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"result": v}
}

// unparsedObject is the structuredContent of parse: json output that was
// returned as text, so a tool declaring OutputSchema still answers with an
// object; note says why.
func unparsedObject(note string) map[string]any {
	return map[string]any{"result": nil, "unparsed": note}
}

// parseJSON decodes exactly one JSON value from data.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the output was empty")
		}
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("the output holds more than one JSON value (at byte %d); a filter that emits a stream can be wrapped in [ ... ]", dec.InputOffset())
	}
	return v, nil
}

// joinReasons joins the non-empty parts of a failure summary.
func joinReasons(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}
