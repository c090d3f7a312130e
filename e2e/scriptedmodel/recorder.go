package scriptedmodel

import (
	"fmt"
	"sync"
)

// Recorder keeps what a scripted endpoint saw: every request line, the
// tool names each model request offered, and each tool result once (a
// harness resends its whole history on every request). The endpoints for
// other model APIs (subpackages responses, chatcompletions, gemini) share
// it, so tests read every harness the same way.
type Recorder struct {
	mu       sync.Mutex
	requests []string
	toolSets [][]string
	results  []ToolResult
	seen     map[string]bool
}

// Request notes one request line, "METHOD PATH".
func (r *Recorder) Request(method, path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, method+" "+path)
}

// Offered notes the tool names one model request offered.
func (r *Recorder) Offered(names []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.toolSets = append(r.toolSets, append([]string{}, names...))
}

// Result notes a tool result unless one with the same ToolUseID was noted.
func (r *Recorder) Result(res ToolResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[res.ToolUseID] {
		return
	}
	r.seen[res.ToolUseID] = true
	r.results = append(r.results, res)
}

// Requests lists "METHOD PATH" of every request received.
func (r *Recorder) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// ToolSets returns the tool names offered in each model request.
func (r *Recorder) ToolSets() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.toolSets...)
}

// Results returns the tool results received so far, in arrival order.
func (r *Recorder) Results() []ToolResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ToolResult(nil), r.results...)
}

// CallID is the id of the i-th call of scripted turn turn: the turn is
// read back from the history (TurnOf) to know which turn comes next.
func CallID(prefix string, turn, i int) string {
	return fmt.Sprintf("%s_%02d_%02d", prefix, turn, i)
}

// TurnOf reads the turn back from a CallID; ok is false for ids the
// script did not make.
func TurnOf(prefix, id string) (turn int, ok bool) {
	var i int
	var rest string
	n, _ := fmt.Sscanf(id, prefix+"_%d_%d%s", &turn, &i, &rest)
	return turn, n == 2
}

// Next is the turn that answers a history holding the given call ids: the
// one after the latest scripted turn among them, 0 when there is none.
func Next(prefix string, ids []string) int {
	next := 0
	for _, id := range ids {
		if t, ok := TurnOf(prefix, id); ok && t+1 > next {
			next = t + 1
		}
	}
	return next
}
