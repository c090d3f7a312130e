package workspace

import (
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// scalar parses a one-line plain or quoted scalar at the cursor.
func (p *fastParser) scalar(flow bool) *yaml.Node {
	line, col := p.line, p.col(p.pos)
	switch p.src[p.pos] {
	case '\'':
		n := p.node(yaml.ScalarNode, "!!str", p.singleQuoted(), line, col)
		n.Style = yaml.SingleQuotedStyle
		return n
	case '"':
		n := p.node(yaml.ScalarNode, "!!str", p.doubleQuoted(), line, col)
		n.Style = yaml.DoubleQuotedStyle
		return n
	}
	if !p.plainStart(flow) {
		bail()
	}
	v := p.plain(flow)
	return p.node(yaml.ScalarNode, plainTag(v), v, line, col)
}

// plainStart reports whether the character at the cursor may begin a plain
// scalar (more strictly than yaml.v3: '?' and ':' never do here).
func (p *fastParser) plainStart(flow bool) bool {
	switch p.src[p.pos] {
	case '-':
		next := p.at(p.pos + 1)
		return !p.blankz(p.pos+1) && !(flow && isFlowIndicator(next))
	case '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\n':
		return false
	}
	return true
}

func isFlowIndicator(c byte) bool {
	switch c {
	case ',', '?', '[', ']', '{', '}':
		return true
	}
	return false
}

// plain scans a plain scalar on the current line as yaml.v3 does: words
// separated by spaces, ending before ": ", before " #", at the end of the
// line and, in flow context, before any of ",?[]{}". The cursor is left
// after its last word. A plain scalar continued on the next line is refused
// by the callers, which require that line to be indented no deeper than
// the enclosing collection.
func (p *fastParser) plain(flow bool) string {
	start, end, i := p.pos, p.pos, p.pos
	for i < len(p.src) && p.src[i] != '#' {
		j := i
		for j < len(p.src) {
			c := p.src[j]
			if c == ' ' || c == '\n' || c == ':' && p.blankz(j+1) || flow && isFlowIndicator(c) {
				break
			}
			j++
		}
		if j > i {
			end = j
		}
		if j == len(p.src) || p.src[j] != ' ' {
			break
		}
		for j < len(p.src) && p.src[j] == ' ' {
			j++
		}
		i = j
	}
	p.pos = end
	return p.src[start:end]
}

// singleQuoted scans a one-line single-quoted scalar.
func (p *fastParser) singleQuoted() string {
	p.pos++
	start := p.pos
	var buf []byte
	for {
		switch p.at(p.pos) {
		case 0, '\n':
			bail()
		case '\'':
			if p.at(p.pos+1) != '\'' {
				s := p.src[start:p.pos]
				if buf != nil {
					s = string(append(buf, s...))
				}
				p.pos++
				return s
			}
			buf = append(buf, p.src[start:p.pos+1]...)
			p.pos += 2
			start = p.pos
		default:
			p.pos++
		}
	}
}

// doubleQuoted scans a one-line double-quoted scalar with yaml.v3's
// escapes.
func (p *fastParser) doubleQuoted() string {
	p.pos++
	start := p.pos
	var buf []byte
	for {
		switch p.at(p.pos) {
		case 0, '\n':
			bail()
		case '"':
			s := p.src[start:p.pos]
			if buf != nil {
				s = string(append(buf, s...))
			}
			p.pos++
			return s
		case '\\':
			buf = append(buf, p.src[start:p.pos]...)
			buf = p.escape(buf)
			start = p.pos
		default:
			p.pos++
		}
	}
}

// simpleEscapes maps the one-character escapes of double-quoted scalars to
// what they stand for.
var simpleEscapes = [256]string{
	'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", 'n': "\n", 'v': "\v", 'f': "\f",
	'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '\'': "'", '\\': "\\",
	'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
}

// escape decodes the escape sequence at the cursor onto buf.
func (p *fastParser) escape(buf []byte) []byte {
	c := p.at(p.pos + 1)
	if s := simpleEscapes[c]; s != "" {
		p.pos += 2
		return append(buf, s...)
	}
	var digits int
	switch c {
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		bail()
	}
	v := 0
	for k := range digits {
		d := p.at(p.pos + 2 + k)
		switch {
		case '0' <= d && d <= '9':
			v = v<<4 + int(d-'0')
		case 'a' <= d && d <= 'f':
			v = v<<4 + int(d-'a'+10)
		case 'A' <= d && d <= 'F':
			v = v<<4 + int(d-'A'+10)
		default:
			bail()
		}
	}
	if v >= 0xD800 && v <= 0xDFFF || v > utf8.MaxRune {
		bail()
	}
	p.pos += 2 + digits
	return utf8.AppendRune(buf, rune(v))
}

// blockScalar parses a literal (|) or folded (>) block scalar, with an
// optional chomping indicator (- or +), as yaml.v3's scanner does; parent
// is the indentation of the enclosing block collection. An explicit
// indentation indicator is left to yaml.v3.
func (p *fastParser) blockScalar(parent int, a anchor) *yaml.Node {
	line, col := p.line, p.col(p.pos)
	literal := p.src[p.pos] == '|'
	p.pos++
	chomp := 0
	switch p.at(p.pos) {
	case '-':
		chomp = -1
		p.pos++
	case '+':
		chomp = +1
		p.pos++
	}
	if c := p.at(p.pos); '0' <= c && c <= '9' {
		bail()
	}
	p.skipSpaces()
	if p.at(p.pos) == '#' {
		if p.src[p.pos-1] != ' ' {
			bail()
		}
		p.skipComment()
	}
	switch p.at(p.pos) {
	case '\n':
		p.newline()
	case 0:
	default:
		bail()
	}
	var s []byte
	indent := 0
	trailing := p.blockBreaks(&indent, parent)
	leading := 0 // line breaks before the current line: 0 or 1
	leadingBlank := false
	for p.pos-p.lineStart == indent && p.pos < len(p.src) {
		trailingBlank := p.src[p.pos] == ' '
		if !literal && !leadingBlank && !trailingBlank && leading > 0 {
			if trailing == 0 {
				s = append(s, ' ')
			}
		} else {
			s = appendBreaks(s, leading)
		}
		s = appendBreaks(s, trailing)
		leadingBlank = trailingBlank
		start := p.pos
		for p.pos < len(p.src) && p.src[p.pos] != '\n' {
			p.pos++
		}
		s = append(s, p.src[start:p.pos]...)
		leading = 0
		if p.pos < len(p.src) {
			p.newline()
			leading = 1
		}
		trailing = p.blockBreaks(&indent, parent)
	}
	if chomp != -1 {
		s = appendBreaks(s, leading)
	}
	if chomp == 1 {
		s = appendBreaks(s, trailing)
	}
	n := p.node(yaml.ScalarNode, "!!str", string(s), line, col)
	n.Style = yaml.FoldedStyle
	if literal {
		n.Style = yaml.LiteralStyle
	}
	// The scalar ends at the end of the input or on a line indented less
	// than its text; that line is read again as the next one.
	if p.pos == len(p.src) {
		p.ind = indEnd
	} else {
		p.pos = p.lineStart
		p.nextContentLine()
	}
	return p.anchored(n, a)
}

// blockBreaks eats indentation and empty lines inside a block scalar and
// returns how many line breaks it ate; when *indent is 0 it sets the
// scalar's indentation from the first line with text, as yaml.v3 does.
func (p *fastParser) blockBreaks(indent *int, parent int) int {
	breaks, maxIndent := 0, 0
	for {
		for (*indent == 0 || p.pos-p.lineStart < *indent) && p.at(p.pos) == ' ' {
			p.pos++
		}
		maxIndent = max(maxIndent, p.pos-p.lineStart)
		if p.at(p.pos) != '\n' {
			break
		}
		p.newline()
		breaks++
	}
	if *indent == 0 {
		*indent = max(maxIndent, parent+1, 1)
	}
	return breaks
}

func appendBreaks(s []byte, n int) []byte {
	for range n {
		s = append(s, '\n')
	}
	return s
}
