package pin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/strictjson"
)

// Change is one field of a tool definition that differs between its pin
// and its live definition: Path is the field, dotted from the definition's
// top (description, inputSchema.properties.query.maxLength); Old and New
// are its JSON values, "" where the field is absent.
type Change struct {
	Path string `json:"path"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// String is the change as one line of a review: path: old → new.
func (c Change) String() string {
	show := func(v string) string {
		if v == "" {
			return "(absent)"
		}
		return clip(v)
	}
	return fmt.Sprintf("%s: %s → %s", c.Path, show(c.Old), show(c.New))
}

// maxShown bounds one value in a change line; the lock file holds it whole.
const maxShown = 200

func clip(v string) string {
	if len(v) <= maxShown {
		return v
	}
	cut := maxShown
	for cut > 0 && v[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return v[:cut] + "…"
}

// Diff lists the fields that differ between two definitions (either may
// be nil: a tool new or gone), object members descended into, anything else compared
// whole; sorted by path. Definitions that cannot be read compare whole.
func Diff(old, live json.RawMessage) []Change {
	var a, b any
	okA := old == nil || decodeNumbers(old, &a) == nil
	okB := live == nil || decodeNumbers(live, &b) == nil
	if !okA || !okB {
		if bytes.Equal(old, live) {
			return nil
		}
		return []Change{{Path: "(definition)", Old: string(old), New: string(live)}}
	}
	// A tool new or gone is shown field by field too.
	if old == nil {
		a = map[string]any{}
	}
	if live == nil {
		b = map[string]any{}
	}
	var out []Change
	diffValue("", a, b, true, true, &out)
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return out
}

func decodeNumbers(raw json.RawMessage, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

func diffValue(path string, a, b any, hasA, hasB bool, out *[]Change) {
	ma, objA := a.(map[string]any)
	mb, objB := b.(map[string]any)
	if objA && objB {
		keys := slices.Sorted(maps.Keys(ma))
		for k := range mb {
			if _, ok := ma[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			va, inA := ma[k]
			vb, inB := mb[k]
			diffValue(join(path, k), va, vb, inA, inB, out)
		}
		return
	}
	ea, eb := encode(a, hasA), encode(b, hasB)
	if ea != eb {
		p := path
		if p == "" {
			p = "(definition)"
		}
		*out = append(*out, Change{Path: p, Old: ea, New: eb})
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func encode(v any, present bool) string {
	if !present {
		return ""
	}
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	b, ok := strictjson.Canonical(v)
	if !ok {
		return fmt.Sprint(v)
	}
	return string(b)
}

// maxSummarized bounds the changes one audit reason spells out; the rest
// are counted (`toolgate pin --diff` shows them all).
const maxSummarized = 20

// DiffSummary is the changes in one line, for an audit reason: at most
// maxSummarized of them, each value clipped, so a hostile definition
// cannot make one event huge.
func DiffSummary(changes []Change) string {
	parts := make([]string, 0, min(len(changes), maxSummarized)+1)
	for i, c := range changes {
		if i == maxSummarized {
			parts = append(parts, fmt.Sprintf("and %d more (`toolgate pin --diff` shows them)", len(changes)-maxSummarized))
			break
		}
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; ")
}
