package workspace

import (
	"regexp"
	"strings"
)

// Segment is one piece of an argv template element: literal text, or a
// placeholder naming an input parameter (or, in env, a credential).
type Segment struct {
	Literal string
	// Param is the placeholder name without braces; "" for a literal.
	Param string
}

// placeholderRE matches {name} and {credential.name}. Braces around anything
// else (a jq object such as {a: .b}) are literal text.
var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_.-]+)?)\}`)

// CredentialPrefix starts a placeholder that names a declared credential.
const CredentialPrefix = "credential."

// ParseTemplate splits one argv (or env) element into literal and
// placeholder segments. It is the only parser of templates, shared by the
// loader's checks and the pack runner's substitution.
func ParseTemplate(elem string) []Segment {
	locs := placeholderRE.FindAllStringSubmatchIndex(elem, -1)
	if locs == nil {
		return []Segment{{Literal: elem}}
	}
	var segs []Segment
	last := 0
	for _, l := range locs {
		if l[0] > last {
			segs = append(segs, Segment{Literal: elem[last:l[0]]})
		}
		segs = append(segs, Segment{Param: elem[l[2]:l[3]]})
		last = l[1]
	}
	if last < len(elem) {
		segs = append(segs, Segment{Literal: elem[last:]})
	}
	return segs
}

// IsCredential reports whether a placeholder names a credential, and which.
func (s Segment) IsCredential() (string, bool) {
	if s.Param == "" || !strings.HasPrefix(s.Param, CredentialPrefix) {
		return "", false
	}
	return strings.TrimPrefix(s.Param, CredentialPrefix), true
}

// Placeholders returns the input parameters an argv template refers to, in
// order of first use.
func Placeholders(argv []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range argv {
		for _, s := range ParseTemplate(e) {
			if _, cred := s.IsCredential(); s.Param == "" || cred || seen[s.Param] {
				continue
			}
			seen[s.Param] = true
			out = append(out, s.Param)
		}
	}
	return out
}
