package transport

import (
	"errors"
	"strings"
	"sync"
)

// StderrLines is how many of a stdio server's last stderr lines are kept to
// explain its end: enough for a stack trace's head and the message under
// it (a Node.js "Cannot find module" sits above its version line).
const StderrLines = 20

// stderrLineMax bounds one kept line; a longer one is cut.
const stderrLineMax = 512

// StderrTail keeps the last StderrLines lines a stdio server's process
// wrote on stderr. As Config.Stderr, one per declared server, it holds
// those of the server's last process to exit, so a server that never
// stays up long enough to answer is still explained by what it printed.
// It is safe for concurrent use.
type StderrTail struct {
	mu    sync.Mutex
	lines []string
}

// add keeps line (without its newline), dropping the oldest beyond the
// bound.
func (t *StderrTail) add(line string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == StderrLines {
		copy(t.lines, t.lines[1:])
		t.lines = t.lines[:StderrLines-1]
	}
	t.lines = append(t.lines, line)
}

// set replaces the kept lines with lines (a process's, at its exit).
func (t *StderrTail) set(lines []string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines[:0], lines...)
}

// Lines returns the kept lines, oldest first.
func (t *StderrTail) Lines() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}

// ExitError is a stdio server's end: how its process exited and the last
// lines it wrote on stderr (at most StderrLines), which usually say why.
type ExitError struct {
	Server string
	// Err is the process's exit (nil for a clean exit).
	Err    error
	Stderr []string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString("server \"" + e.Server + "\" exited")
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	if len(e.Stderr) > 0 {
		b.WriteString("; its last stderr lines:")
		for _, l := range e.Stderr {
			b.WriteString("\n  | " + l)
		}
	} else {
		b.WriteString(" (it wrote nothing on stderr)")
	}
	return b.String()
}

func (e *ExitError) Unwrap() error { return e.Err }

// StderrOf returns the stderr lines of the ExitError in err's chain, or
// nil.
func StderrOf(err error) []string {
	var e *ExitError
	if errors.As(err, &e) {
		return e.Stderr
	}
	return nil
}

// cleanLine makes one stderr line safe to keep and to show: cut to
// stderrLineMax bytes at a rune boundary, invalid UTF-8 replaced, and
// control characters (a terminal escape, a carriage return that would
// overwrite what a reader sees) written as \x escapes.
func cleanLine(line string) string {
	line = strings.TrimRight(line, "\r\n")
	if len(line) > stderrLineMax {
		cut := stderrLineMax
		for cut > 0 && line[cut]&0xc0 == 0x80 {
			cut--
		}
		line = line[:cut] + "…"
	}
	line = strings.ToValidUTF8(line, "\uFFFD")
	if strings.IndexFunc(line, isControl) < 0 {
		return line
	}
	var b strings.Builder
	for _, r := range line {
		if isControl(r) {
			const hex = "0123456789abcdef"
			if r < 0x100 {
				b.WriteString(`\x` + string(hex[r>>4]) + string(hex[r&0xf]))
				continue
			}
			b.WriteString(`\u` + string(hex[r>>12&0xf]) + string(hex[r>>8&0xf]) + string(hex[r>>4&0xf]) + string(hex[r&0xf]))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isControl is a rune a terminal acts on rather than shows: C0 and C1
// controls but tab, and the bidirectional overrides and isolates.
func isControl(r rune) bool {
	switch {
	case r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
