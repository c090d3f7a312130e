package workspace

import "strings"

// Segment is one piece of an argv template element: literal text, or a
// placeholder naming an input parameter (or, in env, a credential).
type Segment struct {
	Literal string
	// Param is the placeholder name without braces; "" for a literal.
	Param string
}

// CredentialPrefix starts a placeholder that names a declared credential.
const CredentialPrefix = "credential."

// ParseTemplate splits one argv (or env) element into literal and
// placeholder segments. A placeholder is {name} or {credential.name}: a
// letter or '_', then letters, digits, '_' or '-', optionally one '.' and
// more of those (and '.'). Braces around anything else (a jq object such as
// {a: .b}) are literal text. It is the only parser of templates, shared by
// the loader's checks and the pack runner's substitution.
func ParseTemplate(elem string) []Segment {
	var segs []Segment
	last := 0
	for i := 0; i < len(elem); i++ {
		if elem[i] != '{' {
			continue
		}
		end := placeholderEnd(elem, i)
		if end < 0 {
			continue
		}
		if i > last {
			segs = append(segs, Segment{Literal: elem[last:i]})
		}
		segs = append(segs, Segment{Param: elem[i+1 : end]})
		last = end + 1
		i = end
	}
	if last < len(elem) || len(segs) == 0 {
		segs = append(segs, Segment{Literal: elem[last:]})
	}
	return segs
}

// placeholderEnd returns the index of the '}' closing a placeholder that
// opens at s[open], or -1 when the braces there are not a placeholder.
func placeholderEnd(s string, open int) int {
	i := open + 1
	if i >= len(s) || !(isLetter(s[i]) || s[i] == '_') {
		return -1
	}
	for i++; i < len(s) && isNameByte(s[i]); i++ {
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && (isNameByte(s[j]) || s[j] == '.') {
			j++
		}
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(s) && s[i] == '}' {
		return i
	}
	return -1
}

func isLetter(c byte) bool   { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isNameByte(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '-' }

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
