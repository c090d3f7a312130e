package harness

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseTOML reads the TOML a Codex config.toml is written in into nested
// maps: tables and inline tables as map[string]any, arrays as []any,
// strings as string, booleans as bool, and other scalars (numbers, dates)
// as their text. It is enough to find mcp_servers.<id>.enabled_tools; the
// error names the line of the first thing it cannot read.
func parseTOML(data []byte) (map[string]any, error) {
	p := &tomlParser{s: string(data), line: 1}
	root := map[string]any{}
	cur := root
	for {
		p.skipSpaceNewlinesComments()
		if p.eof() {
			return root, nil
		}
		var err error
		if p.peek() == '[' {
			cur, err = p.header(root)
		} else {
			err = p.keyValue(cur)
			if err == nil {
				err = p.endOfLine()
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

type tomlParser struct {
	s    string
	i    int
	line int
}

func (p *tomlParser) eof() bool  { return p.i >= len(p.s) }
func (p *tomlParser) peek() byte { return p.s[p.i] }

func (p *tomlParser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", p.line, fmt.Sprintf(format, args...))
}

func (p *tomlParser) skipSpace() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

func (p *tomlParser) skipComment() {
	if !p.eof() && p.peek() == '#' {
		for !p.eof() && p.peek() != '\n' {
			p.i++
		}
	}
}

func (p *tomlParser) skipSpaceNewlinesComments() {
	for !p.eof() {
		switch p.peek() {
		case ' ', '\t', '\r':
			p.i++
		case '\n':
			p.i++
			p.line++
		case '#':
			p.skipComment()
		default:
			return
		}
	}
}

func (p *tomlParser) endOfLine() error {
	p.skipSpace()
	p.skipComment()
	if !p.eof() && p.peek() == '\r' {
		p.i++
	}
	if p.eof() {
		return nil
	}
	if p.peek() != '\n' {
		return p.errorf("unexpected %q after a value", p.peek())
	}
	return nil
}

// header reads [a.b] or [[a.b]] and returns the table keys now go into.
func (p *tomlParser) header(root map[string]any) (map[string]any, error) {
	p.i++
	array := !p.eof() && p.peek() == '['
	if array {
		p.i++
	}
	keys, err := p.key()
	if err != nil {
		return nil, err
	}
	closing := "]"
	if array {
		closing = "]]"
	}
	p.skipSpace()
	if !strings.HasPrefix(p.s[p.i:], closing) {
		return nil, p.errorf("table header not closed with %s", closing)
	}
	p.i += len(closing)
	if err := p.endOfLine(); err != nil {
		return nil, err
	}
	parent, err := p.descend(root, keys[:len(keys)-1])
	if err != nil {
		return nil, err
	}
	last := keys[len(keys)-1]
	if array {
		arr, _ := parent[last].([]any)
		t := map[string]any{}
		parent[last] = append(arr, t)
		return t, nil
	}
	return p.descend(parent, []string{last})
}

// descend walks (creating) nested tables; the last element of an array of
// tables stands for the array.
func (p *tomlParser) descend(t map[string]any, keys []string) (map[string]any, error) {
	for _, k := range keys {
		switch v := t[k].(type) {
		case nil:
			n := map[string]any{}
			t[k] = n
			t = n
		case map[string]any:
			t = v
		case []any:
			if len(v) == 0 {
				return nil, p.errorf("%q is not a table", k)
			}
			last, ok := v[len(v)-1].(map[string]any)
			if !ok {
				return nil, p.errorf("%q is not a table", k)
			}
			t = last
		default:
			return nil, p.errorf("%q is a value, not a table", k)
		}
	}
	return t, nil
}

func (p *tomlParser) keyValue(t map[string]any) error {
	keys, err := p.key()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.eof() || p.peek() != '=' {
		return p.errorf("expected = after key %q", strings.Join(keys, "."))
	}
	p.i++
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return err
	}
	parent, err := p.descend(t, keys[:len(keys)-1])
	if err != nil {
		return err
	}
	parent[keys[len(keys)-1]] = v
	return nil
}

// key reads a dotted key of bare and quoted parts.
func (p *tomlParser) key() ([]string, error) {
	var keys []string
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("expected a key")
		}
		switch c := p.peek(); {
		case c == '"' || c == '\'':
			s, err := p.str()
			if err != nil {
				return nil, err
			}
			keys = append(keys, s)
		default:
			start := p.i
			for !p.eof() && isBareKeyByte(p.peek()) {
				p.i++
			}
			if p.i == start {
				return nil, p.errorf("expected a key, found %q", c)
			}
			keys = append(keys, p.s[start:p.i])
		}
		p.skipSpace()
		if p.eof() || p.peek() != '.' {
			return keys, nil
		}
		p.i++
	}
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *tomlParser) value() (any, error) {
	if p.eof() {
		return nil, p.errorf("expected a value")
	}
	switch p.peek() {
	case '"', '\'':
		return p.str()
	case '[':
		return p.array()
	case '{':
		return p.inlineTable()
	}
	start := p.i
	for !p.eof() && !strings.ContainsRune(",]}#\n\r", rune(p.peek())) {
		p.i++
	}
	raw := strings.TrimSpace(p.s[start:p.i])
	switch raw {
	case "":
		return nil, p.errorf("expected a value")
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return raw, nil
}

func (p *tomlParser) array() ([]any, error) {
	p.i++
	out := []any{}
	for {
		p.skipSpaceNewlinesComments()
		if p.eof() {
			return nil, p.errorf("array not closed with ]")
		}
		if p.peek() == ']' {
			p.i++
			return out, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skipSpaceNewlinesComments()
		if !p.eof() && p.peek() == ',' {
			p.i++
		} else if p.eof() || p.peek() != ']' {
			return nil, p.errorf("expected , or ] in an array")
		}
	}
}

func (p *tomlParser) inlineTable() (map[string]any, error) {
	p.i++
	t := map[string]any{}
	for {
		p.skipSpace()
		if p.eof() {
			return nil, p.errorf("inline table not closed with }")
		}
		if p.peek() == '}' {
			p.i++
			return t, nil
		}
		if err := p.keyValue(t); err != nil {
			return nil, err
		}
		p.skipSpace()
		if !p.eof() && p.peek() == ',' {
			p.i++
		} else if p.eof() || p.peek() != '}' {
			return nil, p.errorf("expected , or } in an inline table")
		}
	}
}

// str reads a basic, literal or multi-line string.
func (p *tomlParser) str() (string, error) {
	q := p.peek()
	if strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)) {
		p.i += 3
		if strings.HasPrefix(p.s[p.i:], "\n") {
			p.i++
			p.line++
		} else if strings.HasPrefix(p.s[p.i:], "\r\n") {
			p.i += 2
			p.line++
		}
		end := strings.Index(p.s[p.i:], strings.Repeat(string(q), 3))
		if end < 0 {
			return "", p.errorf("multi-line string not closed")
		}
		body := p.s[p.i : p.i+end]
		p.line += strings.Count(body, "\n")
		p.i += end + 3
		if q == '\'' {
			return body, nil
		}
		return unescapeTOML(body, p.line)
	}
	p.i++
	start := p.i
	for !p.eof() && p.peek() != q && p.peek() != '\n' {
		if q == '"' && p.peek() == '\\' {
			p.i++
		}
		p.i++
	}
	if p.eof() || p.peek() != q {
		return "", p.errorf("string not closed on its line")
	}
	body := p.s[start:p.i]
	p.i++
	if q == '\'' {
		return body, nil
	}
	return unescapeTOML(body, p.line)
}

func unescapeTOML(s string, line int) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf("line %d: a string ends in a lone backslash", line)
		}
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case '"', '\\':
			b.WriteByte(s[i])
		case 'u', 'U':
			n := 4
			if s[i] == 'U' {
				n = 8
			}
			if i+1+n > len(s) {
				return "", fmt.Errorf("line %d: short \\%c escape", line, s[i])
			}
			r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(r)) {
				return "", fmt.Errorf("line %d: bad \\%c escape", line, s[i])
			}
			b.WriteRune(rune(r))
			i += n
		case '\n', ' ', '\t', '\r':
			// line-ending backslash in a multi-line string: trim the
			// newline and the whitespace after it
			for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
				i++
			}
			i--
		default:
			return "", fmt.Errorf("line %d: unknown escape \\%c", line, s[i])
		}
	}
	return b.String(), nil
}
