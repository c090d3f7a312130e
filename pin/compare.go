package pin

import (
	"slices"
	"strings"
)

// Status is how one live tool stands against the lock.
type Status string

// The statuses. Only StatusPinned tools are served while a lock exists.
const (
	StatusPinned  Status = "pinned"  // the live definition is the pinned one
	StatusChanged Status = "changed" // pinned, but the live definition differs
	StatusNew     Status = "new"     // live, never pinned
	StatusGone    Status = "gone"    // pinned, no longer listed
	StatusInvalid Status = "invalid" // listed, but its definition cannot be pinned (duplicate keys, no name…)
)

// Result is one tool's comparison. Pinned and Live are empty where absent.
type Result struct {
	Surface string
	Tool    string
	Status  Status
	Pinned  Digest
	Live    Digest
}

// Served reports whether the tool may be listed and called.
func (r Result) Served() bool { return r.Status == StatusPinned }

// Compare sets surface's live tools against the lock: one Result a tool,
// live or pinned, sorted by name. A tool in live with an empty Digest (it
// could not be pinned) or listed twice is StatusInvalid.
func (l *Lock) Compare(surface string, live []Tool) []Result {
	pinned := map[string]Digest{}
	if l != nil {
		pinned = l.Surfaces[surface]
	}
	count := map[string]int{}
	for _, t := range live {
		count[t.Name]++
	}
	var out []Result
	seen := map[string]bool{}
	for _, t := range live {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		r := Result{Surface: surface, Tool: t.Name, Live: t.Digest}
		old, ok := pinned[t.Name]
		r.Pinned = old
		switch {
		case t.Digest == "" || count[t.Name] > 1:
			// Unpinnable, or listed twice: a reviewer and the model could
			// be shown two different definitions under one name.
			r.Status, r.Live = StatusInvalid, ""
		case !ok:
			r.Status = StatusNew
		case old == t.Digest:
			r.Status = StatusPinned
		default:
			r.Status = StatusChanged
		}
		out = append(out, r)
	}
	for name, d := range pinned {
		if !seen[name] {
			out = append(out, Result{Surface: surface, Tool: name, Status: StatusGone, Pinned: d})
		}
	}
	slices.SortFunc(out, func(a, b Result) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// Check is the hot-path question for one tool: may it be served with this
// live digest? With no lock (nil), everything is served.
func (l *Lock) Check(surface, tool string, live Digest) Status {
	if l == nil {
		return StatusPinned
	}
	old, ok := l.Surfaces[surface][tool]
	switch {
	case live == "":
		return StatusInvalid
	case !ok:
		return StatusNew
	case old != live:
		return StatusChanged
	}
	return StatusPinned
}
