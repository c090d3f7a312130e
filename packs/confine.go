package packs

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/workspace"
)

// Interpreter confinement (docs/packs.md). A parameter listed under a
// command's `program:` is program text the agent wrote, for an interpreter
// that could otherwise reach files the grant never named. Trust boundary:
// the program text is hostile; the confinement is the pack's frozen argv
// (for jq: -L pointing nowhere), the runner's environment (HOME and, where
// the call allows, the working directory: a fresh empty directory) and a
// check of the text itself, per interpreter, before anything runs.

// confinement is what the runner knows how to confine, by program name.
type confinement struct {
	// check refuses program text that can reach files by name.
	check func(text string) error
	// why is said in a refusal, so the caller learns what to change.
	why string
}

// confinements lists the interpreters whose program text toolgate can
// confine. A command naming program parameters for any other program is
// refused: unconfined program text would be worse than none.
var confinements = map[string]confinement{
	"jq": {check: checkJQ, why: "jq programs may not use import, include or modulemeta, which read modules and data files by name"},
}

// confinedProgram returns the confinement for cmd's program text, or nil
// when cmd declares none; an error when it declares program parameters for
// an interpreter toolgate cannot confine.
func confinedProgram(cmd *workspace.Command) (*confinement, error) {
	if len(cmd.Program) == 0 {
		return nil, nil
	}
	name := ""
	if len(cmd.Argv) > 0 {
		name = filepath.Base(cmd.Argv[0])
	}
	c, ok := confinements[name]
	if !ok {
		known := make([]string, 0, len(confinements))
		for k := range confinements {
			known = append(known, k)
		}
		sort.Strings(known)
		return nil, fmt.Errorf("program: names %s as program text for %q, but toolgate can confine program text only for %s; remove program: (and do not offer agent-written programs to %s) or run one of those", strings.Join(cmd.Program, ", "), name, strings.Join(known, ", "), name)
	}
	return &c, nil
}

// checkPrograms runs the confinement's check on every program argument.
func checkPrograms(c *confinement, cmd *workspace.Command, args map[string]any) error {
	for _, p := range cmd.Program {
		v, ok := lookup(args, p)
		if !ok {
			continue
		}
		s, isString := v.(string)
		if !isString {
			return &ArgError{Param: p, Msg: "is program text and must be a string"}
		}
		if err := c.check(s); err != nil {
			return &ArgError{Param: p, Msg: fmt.Sprintf("%v (%s)", err, c.why)}
		}
	}
	return nil
}

// needsDeclaredDir reports whether a confined call must still run in the
// command's declared directory: some argument other than program text is a
// relative name the program would resolve there. Otherwise it runs in an
// empty directory, where a relative name reaches nothing.
func needsDeclaredDir(cmd *workspace.Command, args map[string]any) bool {
	relative := func(v any) bool {
		s, ok := v.(string)
		return ok && s != "" && !filepath.IsAbs(s)
	}
	for k, v := range args {
		if slices.Contains(cmd.Program, k) {
			continue
		}
		if items, ok := v.([]any); ok {
			if slices.ContainsFunc(items, relative) {
				return true
			}
			continue
		}
		if relative(v) {
			return true
		}
	}
	return false
}

// jqFileDirectives are the jq words that read files by name: the module
// directives, and the builtin that loads a module to describe it.
var jqFileDirectives = []string{"import", "include", "modulemeta"}

// checkJQ refuses jq program text that uses import, include or modulemeta
// as code. It follows jq's lexer where that matters: strings (with \(...)
// interpolation, which is code again) and comments are skipped, a word
// directly after "." or "$" or "@" is a field, variable or format, and a
// word followed by ":" is an object key. Where it is unsure it treats text
// as code, so it may refuse too much, never too little.
func checkJQ(text string) error {
	_, err := scanJQ(text, 0, false)
	return err
}

// scanJQ scans jq code from i; with inParen it stops after the ")" that
// closes an interpolation and returns the index after it.
func scanJQ(s string, i int, inParen bool) (int, error) {
	depth := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case c == '"':
			j, err := scanJQString(s, i+1)
			if err != nil {
				return 0, err
			}
			i = j
			continue
		case c == '(':
			depth++
		case c == ')':
			if inParen && depth == 0 {
				return i + 1, nil
			}
			depth--
		case isIdentStart(c):
			j := i
			for j < len(s) && (isIdentChar(s[j]) || s[j] == ':' && j+1 < len(s) && s[j+1] == ':' && j+2 < len(s) && isIdentStart(s[j+2])) {
				if s[j] == ':' {
					j += 2
					continue
				}
				j++
			}
			word := s[i:j]
			prefixed := i > 0 && (s[i-1] == '.' || s[i-1] == '$' || s[i-1] == '@')
			if !prefixed && slices.Contains(jqFileDirectives, word) && !followedByColon(s, j) {
				return 0, fmt.Errorf("uses %q at offset %d", word, i)
			}
			i = j
			continue
		}
		i++
	}
	if inParen {
		return 0, fmt.Errorf("has an unterminated string interpolation")
	}
	return i, nil
}

// scanJQString skips a jq string body from i (after the opening quote) and
// returns the index after the closing quote; interpolations are scanned as
// code.
func scanJQString(s string, i int) (int, error) {
	for i < len(s) {
		switch s[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 < len(s) && s[i+1] == '(' {
				j, err := scanJQ(s, i+2, true)
				if err != nil {
					return 0, err
				}
				i = j
				continue
			}
			i += 2
			continue
		}
		i++
	}
	return 0, fmt.Errorf("has an unterminated string")
}

// followedByColon reports whether the next character after j, past spaces
// and comments, is a single ':' (an object key).
func followedByColon(s string, j int) bool {
	for j < len(s) {
		switch c := s[j]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			j++
		case c == '#':
			for j < len(s) && s[j] != '\n' {
				j++
			}
		default:
			return c == ':' && (j+1 >= len(s) || s[j+1] != ':')
		}
	}
	return false
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
