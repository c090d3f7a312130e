package harness

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// TOML is how harness configs kept in TOML (Codex's config.toml) are read
// and written. Reading is github.com/pelletier/go-toml/v2, a TOML 1.1
// decoder as strict as Codex's own: a key set twice, a table declared
// twice, a malformed value (enabled = fals) or a value of the wrong type
// is refused with the file, line and column. Writing is the few forms
// mcp-config prints: bare or quoted keys, basic strings, arrays of
// strings.

// tomlError is a TOML file refused at a position: Error reads
// "path:line:column: message".
type tomlError struct {
	path         string
	line, column int
	msg          string
}

func (e *tomlError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.path, e.line, e.column, e.msg)
}

// decodeTOML decodes data, read from path, into v (a pointer to a struct
// with toml tags; keys it has no field for are ignored). A document that
// is not TOML, or whose value does not fit v's type, is a *tomlError at the
// offending line.
func decodeTOML(path string, data []byte, v any) error {
	err := toml.NewDecoder(bytes.NewReader(data)).Decode(v)
	if err == nil {
		return nil
	}
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return fmt.Errorf("%s: %w", path, err)
	}
	line, col := de.Position()
	return &tomlError{path: path, line: line, column: col, msg: tomlMessage(de, reflect.TypeOf(v), sourceLine(data, line))}
}

// tomlMismatchRE matches go-toml's type mismatches ("cannot decode TOML
// string into struct field … of type bool", "cannot store an array table
// in a map"), which name Go types rather than what the file should hold.
var tomlMismatchRE = regexp.MustCompile(`^toml: cannot (?:decode TOML (\w+(?: \w+)?) into|store (an array table) in)`)

// tomlMessage says what is wrong in TOML terms: a type mismatch as "key:
// a string where a boolean belongs", a syntax error with the line it is
// on.
func tomlMessage(de *toml.DecodeError, root reflect.Type, src string) string {
	key := strings.Join(de.Key(), ".")
	m := tomlMismatchRE.FindStringSubmatch(de.Error())
	if m == nil {
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if src != "" {
			msg += fmt.Sprintf(" in %q", src)
		}
		return msg
	}
	found := strings.TrimPrefix(m[1]+m[2], "an ")
	if found == "array table" {
		found = "array of tables"
	}
	want := tomlTypeAt(root, de.Key())
	switch {
	case want == nil:
		return fmt.Sprintf("%s: %s is not allowed here", key, article(found))
	case want.Kind() == reflect.Slice && !strings.Contains(de.Error(), " of type []"):
		// an element of the array, not the array, is of the wrong type
		return fmt.Sprintf("%s: %s in what must be %s", key, article(found), describeTOML(want))
	}
	return fmt.Sprintf("%s: %s where %s belongs", key, article(found), describeTOML(want))
}

// tomlTypeAt is the Go type that key (a path of TOML keys) decodes into
// under root; nil when root has no place for it.
func tomlTypeAt(root reflect.Type, key []string) reflect.Type {
	t := root
	for _, k := range key {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := tomlField(t, k)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func tomlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// describeTOML names what a Go type holds in TOML words.
func describeTOML(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean (true or false, unquoted)"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describeTOML(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "a table"
	case reflect.Interface:
		return "a value"
	}
	return t.String()
}

func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// sourceLine is line n (from 1) of data, trimmed, for an error to quote;
// "" when out of range or too long to quote.
func sourceLine(data []byte, n int) string {
	lines := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(lines) {
		return ""
	}
	s := strings.TrimSpace(string(lines[n-1]))
	if len(s) > 120 {
		return ""
	}
	return s
}

// tomlErrorAt is a *tomlError for a document that decoded but whose
// content is refused: positioned at the first key of data under path (a
// table header, a dotted key, or a key holding an inline table), line 1
// when none is found.
func tomlErrorAt(file string, data []byte, path []string, format string, args ...any) error {
	line, col := tomlKeyPosition(data, path)
	return &tomlError{path: file, line: line, column: col, msg: strings.Join(path, ".") + ": " + fmt.Sprintf(format, args...)}
}

// tomlKeyPosition finds where the key path is first written in data.
func tomlKeyPosition(data []byte, path []string) (line, col int) {
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		var full []string
		var first *unstable.Node
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = table[:0]
			for it := e.Key(); it.Next(); {
				if first == nil {
					first = it.Node()
				}
				table = append(table, string(it.Node().Data))
			}
			full = table
		case unstable.KeyValue:
			full = append([]string(nil), table...)
			for it := e.Key(); it.Next(); {
				if first == nil {
					first = it.Node()
				}
				full = append(full, string(it.Node().Data))
			}
		default:
			continue
		}
		if first != nil && len(full) >= len(path) && slices.Equal(full[:len(path)], path) {
			pos := p.Shape(first.Raw).Start
			return pos.Line, pos.Column
		}
	}
	return 1, 1
}

var bareKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// tomlKey is k as a TOML key: bare when it can be, else a basic string.
func tomlKey(k string) string {
	if bareKeyRE.MatchString(k) {
		return k
	}
	return tomlString(k)
}

// tomlString is a TOML basic string: quotes, backslashes and control
// characters escaped, everything else as is.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlArray is a one-line TOML array of basic strings.
func tomlArray(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
