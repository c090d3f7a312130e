package redact

import "strings"

// Cut redacts output that was cut mid-stream: besides every whole
// credential value, a fragment of one at the cut edge (the start of a value
// at the end of s when cutEnd, the end of a value at the start of s when
// cutStart) is replaced too, since a textual match cannot see it.
func (r *Redactor) Cut(s string, cutStart, cutEnd bool) string {
	if r.empty() {
		return s
	}
	head, tail := "", ""
	if cutEnd {
		if name, k := r.edgeFragment(s, strings.HasSuffix, func(v string, k int) string { return v[:k] }); k > 0 {
			s, tail = s[:len(s)-k], mark(name)
		}
	}
	if cutStart {
		if name, k := r.edgeFragment(s, strings.HasPrefix, func(v string, k int) string { return v[len(v)-k:] }); k > 0 {
			s, head = s[k:], mark(name)
		}
	}
	return head + r.text(s, 0) + tail
}

// edgeFragment finds the longest proper fragment (of at least MinLen
// bytes) of a credential value that s starts or ends with. On a tie the
// shorter value, then the smaller name, wins, so the mark is deterministic.
func (r *Redactor) edgeFragment(s string, has func(s, frag string) bool, frag func(v string, k int) string) (string, int) {
	bestName, best := "", 0
	for name, v := range r.creds {
		for k := min(len(v)-1, len(s)); k >= MinLen && k >= best; k-- {
			if !has(s, frag(v, k)) {
				continue
			}
			if k > best || len(v) < len(r.creds[bestName]) ||
				len(v) == len(r.creds[bestName]) && name < bestName {
				bestName, best = name, k
			}
			break
		}
	}
	return bestName, best
}
