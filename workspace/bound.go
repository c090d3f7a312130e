package workspace

import (
	"fmt"
	"slices"
	"strings"
)

// Where a bound placeholder may stand (docs/packs.md). A parameter bound by
// path_within (a grant's param_constraints) or listed under a command's
// creates: is a file the gateway opens itself beneath a root; the command
// receives it as a descriptor path, /dev/fd/N. Text after that path is
// resolved from the descriptor — "{dir}/../x" becomes /dev/fd/3/../x, a
// walk out of the root — and a placeholder before it would let the caller
// choose where the descriptor path is looked up. So a bound placeholder is
// a whole element ("{path}") or stands last after literal text
// ("--file={path}"). The same rule holds for output.write_to, whose target
// must be the file the grant checked. The loader (package grantcheck, for
// path_within; the validator, for creates:) and the pack runner, on every
// call, apply this one function.

// MisplacedBound is one template element where a bound placeholder stands
// anywhere but alone or last after literal text.
type MisplacedBound struct {
	// Pos is where the element was written (the command's position when
	// the element's is unknown).
	Pos Pos
	// Elem is the element (or the output.write_to template) as written;
	// Index its position in argv, -1 for output.write_to.
	Elem  string
	Index int
	// Param is the bound parameter; By says what binds it ("bound by
	// path_within", "listed under creates").
	Param, By string
	// before is the placeholder before Param, or "" when the fault is the
	// text after it.
	before string
}

// Error says which element, why it cannot be run, and how to fix it.
func (m *MisplacedBound) Error() string {
	where := fmt.Sprintf("argv element %d %q", m.Index, m.Elem)
	if m.Index < 0 {
		where = fmt.Sprintf("output.write_to %q", m.Elem)
	}
	var why string
	switch {
	case m.before != "":
		why = fmt.Sprintf("the placeholder {%s} before it would let the caller choose where that file is looked up", m.before)
	case m.Index < 0:
		why = fmt.Sprintf("the text after it (%q) would name a file other than the one checked beneath the root", m.after())
	default:
		why = fmt.Sprintf("the command receives it as a descriptor path (/dev/fd/N), and the text after it (%q) would be resolved from that descriptor, which can walk out of the root (/dev/fd/3/../x)", m.after())
	}
	return fmt.Sprintf("%s: {%s} is %s, a file the gateway opens itself beneath a root; %s. A bound placeholder must be a whole element (\"{%s}\") or stand last after literal text (\"--file={%s}\"): bind the whole path as one parameter instead of composing it",
		where, m.Param, m.By, why, m.Param, m.Param)
}

// after is the text of Elem after Param's placeholder.
func (m *MisplacedBound) after() string {
	_, rest, _ := strings.Cut(m.Elem, "{"+m.Param+"}")
	return rest
}

// MisplacedBounds lists the elements of c's argv, and its output.write_to,
// in which a placeholder of a parameter for which bound is true stands
// anywhere but alone or last after literal text; by says what binds them
// ("bound by path_within").
// Nil when every bound placeholder stands where it may.
func MisplacedBounds(c *Command, by string, bound func(param string) bool) []*MisplacedBound {
	var out []*MisplacedBound
	check := func(i int, elem string, pos Pos) {
		if strings.IndexByte(elem, '{') < 0 {
			return
		}
		if m := misplaced(elem, bound); m != nil {
			m.Index, m.Pos, m.By = i, pos, by
			out = append(out, m)
		}
	}
	for i, e := range c.Argv {
		pos := c.Pos
		if i < len(c.ArgvPos) {
			pos = c.ArgvPos[i]
		}
		check(i, e, pos)
	}
	pos := c.Output.Pos
	if pos.Line == 0 {
		pos = c.Pos
	}
	check(-1, c.Output.WriteTo, pos)
	return out
}

// misplaced checks one element: nil when each bound placeholder in it is
// the last segment with only literal text before it.
func misplaced(elem string, bound func(string) bool) *MisplacedBound {
	segs := ParseTemplate(elem)
	before := ""
	for i, s := range segs {
		if s.Param == "" {
			continue
		}
		if bound(s.Param) {
			switch {
			case before != "":
				return &MisplacedBound{Elem: elem, Param: s.Param, before: before}
			case i != len(segs)-1:
				return &MisplacedBound{Elem: elem, Param: s.Param}
			}
		}
		before = s.Param
	}
	return nil
}

// creates checks a command's creates: list: each entry a declared
// parameter whose placeholder stands where a bound one may, on a command
// that writes, and not program text.
func (v *validator) creates(name string, c *Command, props []string) {
	at := func(i int) Pos {
		if i < len(c.CreatesPos) {
			return c.CreatesPos[i]
		}
		return c.Pos
	}
	placeholders := Placeholders(c.Argv)
	for i, s := range c.Creates {
		switch {
		case !slices.Contains(props, s):
			v.errorf(at(i), "command %s: creates names %q, which is not declared in inputs.properties; declare it (for example %s: {type: string}) or remove it from creates", name, s, s)
		case !slices.Contains(placeholders, s):
			v.errorf(at(i), "command %s: creates names %q, which is not an argv placeholder; creates lists the argv parameters naming a file the command writes (output.write_to creates its own file)", name, s)
		case slices.Contains(c.Program, s):
			v.errorf(at(i), "command %s: creates names %q, which is also program text; a parameter is either a file name or a program", name, s)
		case c.Effects == EffectRead:
			v.errorf(at(i), "command %s: creates names %q, but the command's effects are read, and a read command creates no file; declare effects: write, or remove creates", name, s)
		}
	}
	if len(c.Creates) == 0 {
		return
	}
	for _, m := range MisplacedBounds(c, "listed under creates", func(p string) bool { return slices.Contains(c.Creates, p) }) {
		v.errorf(m.Pos, "command %s: %v", name, m)
	}
}
