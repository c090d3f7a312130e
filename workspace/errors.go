package workspace

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// String prints FILE:LINE:COL, the form editors and CI annotations jump to.
func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is one problem in a workspace, at the place it was written.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// Errorf builds an Error at pos; engines use it so their findings print the
// same way as the loader's.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// ErrorList is every problem found in one load. Loading reports all of them
// at once so an operator fixes a file in one pass, not one error per run.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Sort orders errors by file, line, column and message, so output is
// stable whatever order the checks ran in.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return l[i].Msg < l[j].Msg
	})
}

// Err returns nil for an empty list, so callers can `return l.Err()`.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	l.Sort()
	return l
}

// AsList extracts the individual positioned errors from err, wrapping a
// plain error as one position-less entry.
func AsList(err error) ErrorList {
	if err == nil {
		return nil
	}
	var l ErrorList
	if errors.As(err, &l) {
		return l
	}
	var e *Error
	if errors.As(err, &e) {
		return ErrorList{e}
	}
	return ErrorList{{Msg: err.Error()}}
}
