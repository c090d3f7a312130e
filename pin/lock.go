package pin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/toolgate/toolgate/strictjson"
)

// FileName is the lock file's name, beside the workspace file.
const FileName = "toolgate.lock"

// Version is the lock file format this package writes: per tool, its
// digest and its full canonical definition. Version 1 (digests only) is
// still read: its pins hold, but it gives the offline commands no
// definitions to decide from until `toolgate pin --update` rewrites it.
const Version = 2

// versionDigestsOnly is the first format: per tool, its digest alone.
const versionDigestsOnly = 1

// MaxFileBytes bounds the lock file read: far above any real one (a tool's
// definition is a few kilobytes), small enough that a hostile one costs
// little.
const MaxFileBytes = 8 << 20

var surfaceRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// maxToolName bounds a tool name in the lock (MCP suggests 128 at most).
const maxToolName = 256

// Lock is the content of toolgate.lock: per surface, per tool, the digest
// of the definition that was reviewed and that definition itself (its
// canonical bytes), which the offline commands decide from.
type Lock struct {
	Surfaces map[string]map[string]Digest
	// Definitions holds, per surface and tool, the canonical definition
	// the digest is of; a tool pinned by a version 1 lock has none.
	Definitions map[string]map[string]json.RawMessage
	// Format is the version the lock was read in (Version for a new one).
	Format int
}

// New returns an empty lock.
func New() *Lock {
	return &Lock{Surfaces: map[string]map[string]Digest{}, Definitions: map[string]map[string]json.RawMessage{}, Format: Version}
}

// Definition returns the canonical definition pinned for surface's tool,
// if the lock records it.
func (l *Lock) Definition(surface, tool string) (json.RawMessage, bool) {
	if l == nil {
		return nil, false
	}
	d, ok := l.Definitions[surface][tool]
	return d, ok
}

// SurfaceDefinitions returns surface's pinned definitions sorted by tool
// name, and whether every pinned tool of it has one.
func (l *Lock) SurfaceDefinitions(surface string) ([]json.RawMessage, bool) {
	if l == nil {
		return nil, false
	}
	pins, ok := l.Surfaces[surface]
	if !ok {
		return nil, false
	}
	out := make([]json.RawMessage, 0, len(pins))
	for _, name := range slices.Sorted(maps.Keys(pins)) {
		d, ok := l.Definitions[surface][name]
		if !ok {
			return nil, false
		}
		out = append(out, d)
	}
	return out, true
}

// PathFor is the lock file beside the workspace file at workspacePath.
func PathFor(workspacePath string) string {
	return filepath.Join(filepath.Dir(workspacePath), FileName)
}

// Pinned returns the digest pinned for surface's tool, if any.
func (l *Lock) Pinned(surface, tool string) (Digest, bool) {
	if l == nil {
		return "", false
	}
	d, ok := l.Surfaces[surface][tool]
	return d, ok
}

// SetSurface replaces surface's pins with tools (what `pin --update`
// records after review); a surface with no tools is removed.
func (l *Lock) SetSurface(surface string, tools []Tool) {
	if len(tools) == 0 {
		delete(l.Surfaces, surface)
		return
	}
	m := make(map[string]Digest, len(tools))
	defs := make(map[string]json.RawMessage, len(tools))
	for _, t := range tools {
		m[t.Name] = t.Digest
		if t.Definition != nil {
			defs[t.Name] = t.Definition
		}
	}
	l.Surfaces[surface] = m
	if l.Definitions == nil {
		l.Definitions = map[string]map[string]json.RawMessage{}
	}
	l.Definitions[surface] = defs
}

// Tools returns surface's pins as SetSurface takes them, sorted by name.
func (l *Lock) Tools(surface string) []Tool {
	pins := l.Surfaces[surface]
	out := make([]Tool, 0, len(pins))
	for _, name := range slices.Sorted(maps.Keys(pins)) {
		out = append(out, Tool{Name: name, Digest: pins[name], Definition: l.Definitions[surface][name]})
	}
	return out
}

// Marshal renders the lock deterministically: keys sorted at every level,
// each definition indented one member a line, a final newline — so a
// changed description or schema reads as a diff of the lines it changed.
func (l *Lock) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"version\": %d,\n  \"surfaces\": {", Version)
	surfaces := slices.Sorted(maps.Keys(l.Surfaces))
	for i, s := range surfaces {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(strictjson.AppendString(nil, s))
		b.WriteString(": {")
		tools := slices.Sorted(maps.Keys(l.Surfaces[s]))
		for j, t := range tools {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n      ")
			b.Write(strictjson.AppendString(nil, t))
			b.WriteString(": {\n        \"digest\": ")
			b.Write(strictjson.AppendString(nil, string(l.Surfaces[s][t])))
			if def, ok := l.Definitions[s][t]; ok {
				b.WriteString(",\n        \"definition\": ")
				var ind bytes.Buffer
				if json.Indent(&ind, def, "        ", "  ") == nil {
					b.Write(ind.Bytes())
				} else {
					b.Write(def) // canonical already; Indent only fails on invalid JSON
				}
			}
			b.WriteString("\n      }")
		}
		if len(tools) > 0 {
			b.WriteString("\n    ")
		}
		b.WriteByte('}')
	}
	if len(surfaces) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes()
}

// Write replaces the lock file at path atomically: a temporary file in the
// same directory, synced, then renamed over it, so a reader sees the old
// lock or the new one, never half of one.
func Write(path string, l *Lock) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing to remove
	if _, err := tmp.Write(l.Marshal()); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename durable
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Read loads the lock file at path strictly. A missing file is returned as
// an error satisfying errors.Is(err, os.ErrNotExist): no lock, no pinning.
func Read(path string) (*Lock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes; a lock file is a few kilobytes a tool — regenerate it with `toolgate pin --update`", path, MaxFileBytes)
	}
	return Parse(path, b)
}

// Parse reads a lock file's bytes strictly: an unknown or duplicate key, a
// wrong type, a malformed digest, an unknown version — each an error
// naming file:line:col and how to fix it.
func Parse(name string, b []byte) (*Lock, error) {
	p := &parser{name: name, src: b, dec: json.NewDecoder(bytes.NewReader(b))}
	p.dec.UseNumber()
	l, err := p.lock()
	if err != nil {
		return nil, err
	}
	return l, nil
}

// parser walks the token stream, tracking where each token starts.
type parser struct {
	name string
	src  []byte
	dec  *json.Decoder
	at   int64 // offset where the last token read starts
}

func (p *parser) errf(off int64, format string, args ...any) error {
	line, col := 1, 1
	for i := int64(0); i < off && i < int64(len(p.src)); i++ {
		if p.src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("%s:%d:%d: %s", p.name, line, col, fmt.Sprintf(format, args...))
}

func (p *parser) token() (json.Token, error) {
	start := p.dec.InputOffset()
	for start < int64(len(p.src)) && strings.ContainsRune(" \t\r\n,:", rune(p.src[start])) {
		start++
	}
	p.at = start
	tok, err := p.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, p.errf(se.Offset, "not valid JSON: %v", err)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, p.errf(int64(len(p.src)), "the file ends early (truncated?)")
		}
		return nil, p.errf(start, "%v", err)
	}
	return tok, nil
}

func (p *parser) open(what string) error {
	tok, err := p.token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return p.errf(p.at, "%s must be an object, found %s", what, describe(tok))
	}
	return nil
}

// members calls each for every key of the object just opened, refusing
// duplicates, then consumes the closing brace.
func (p *parser) members(what string, each func(key string, at int64) error) error {
	seen := map[string]bool{}
	for p.dec.More() {
		tok, err := p.token()
		if err != nil {
			return err
		}
		key := tok.(string) // json.Decoder only yields string keys inside objects
		at := p.at
		if seen[key] {
			return p.errf(at, "duplicate key %q in %s", key, what)
		}
		seen[key] = true
		if err := each(key, at); err != nil {
			return err
		}
	}
	_, err := p.token()
	return err
}

func (p *parser) lock() (*Lock, error) {
	l := New()
	if err := p.open("the lock file"); err != nil {
		return nil, err
	}
	sawVersion, sawSurfaces := false, false
	err := p.members("the lock file", func(key string, at int64) error {
		switch key {
		case "version":
			tok, err := p.token()
			if err != nil {
				return err
			}
			n, ok := tok.(json.Number)
			switch {
			case ok && n.String() == fmt.Sprint(Version):
				l.Format = Version
			case ok && n.String() == fmt.Sprint(versionDigestsOnly):
				l.Format = versionDigestsOnly
			default:
				return p.errf(p.at, "version %s is not supported: this toolgate reads versions %d and %d (regenerate with `toolgate pin --update`)", describe(tok), versionDigestsOnly, Version)
			}
			if sawSurfaces {
				return p.errf(at, "\"version\" must come before \"surfaces\" (regenerate with `toolgate pin --update`)")
			}
			sawVersion = true
			return nil
		case "surfaces":
			if !sawVersion {
				return p.errf(at, "no \"version\" before \"surfaces\": not a toolgate lock file (regenerate with `toolgate pin --update`)")
			}
			sawSurfaces = true
			return p.surfaces(l)
		}
		return p.errf(at, "unknown key %q (expected version, surfaces)", key)
	})
	if err != nil {
		return nil, err
	}
	if !sawVersion {
		return nil, p.errf(0, "no \"version\": not a toolgate lock file")
	}
	if p.dec.More() {
		return nil, p.errf(p.dec.InputOffset(), "data after the lock object")
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, p.errf(p.dec.InputOffset(), "data after the lock object")
	}
	return l, nil
}

func (p *parser) surfaces(l *Lock) error {
	if err := p.open(`"surfaces"`); err != nil {
		return err
	}
	return p.members(`"surfaces"`, func(surface string, at int64) error {
		if !surfaceRE.MatchString(surface) {
			return p.errf(at, "surface id %q: use letters, digits, '_', '.' and '-'", surface)
		}
		what := fmt.Sprintf("surface %q", surface)
		if err := p.open(what); err != nil {
			return err
		}
		tools := map[string]Digest{}
		l.Surfaces[surface] = tools
		return p.members(what, func(tool string, at int64) error {
			if tool == "" || len(tool) > maxToolName || strings.ContainsFunc(tool, unicode.IsControl) {
				return p.errf(at, "tool name %q in %s: 1 to %d printable characters", tool, what, maxToolName)
			}
			if l.Format == versionDigestsOnly {
				d, err := p.digest(what, tool)
				if err != nil {
					return err
				}
				tools[tool] = d
				return nil
			}
			return p.entry(l, surface, tool)
		})
	})
}

// digest reads one digest string.
func (p *parser) digest(what, tool string) (Digest, error) {
	tok, err := p.token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok || !Digest(s).Valid() {
		return "", p.errf(p.at, "%s tool %q: want a digest \"sha256:<64 lowercase hex>\", found %s", what, tool, describe(tok))
	}
	return Digest(s), nil
}

// entry reads one version 2 tool: {"digest": …, "definition": {…}}. The
// definition must be the named tool's, in canonical form as far as its
// digest goes: its digest is computed again and must be the recorded one,
// so a definition edited by hand (or a digest) is refused, never trusted.
func (p *parser) entry(l *Lock, surface, tool string) error {
	what := fmt.Sprintf("surface %q tool %q", surface, tool)
	if err := p.open(what); err != nil {
		return err
	}
	var dg Digest
	var def json.RawMessage
	var defAt int64
	open := p.at
	err := p.members(what, func(key string, at int64) error {
		switch key {
		case "digest":
			d, err := p.digest(fmt.Sprintf("surface %q", surface), tool)
			dg = d
			return err
		case "definition":
			defAt = p.dec.InputOffset()
			for defAt < int64(len(p.src)) && strings.ContainsRune(" \t\r\n:", rune(p.src[defAt])) {
				defAt++
			}
			if err := p.dec.Decode(&def); err != nil {
				return p.errf(defAt, "%s: definition: %v", what, err)
			}
			return nil
		}
		return p.errf(at, "unknown key %q in %s (expected digest, definition)", key, what)
	})
	if err != nil {
		return err
	}
	if dg == "" {
		return p.errf(open, "%s has no \"digest\" (regenerate with `toolgate pin --update`)", what)
	}
	l.Surfaces[surface][tool] = dg
	if def == nil {
		return nil
	}
	canon, name, err := CanonicalDefinition(def)
	if err != nil {
		return p.errf(defAt, "%s: %v", what, err)
	}
	if name != tool {
		return p.errf(defAt, "%s: the definition is named %q; the lock and its definitions must agree (regenerate with `toolgate pin --update`)", what, name)
	}
	if digestOf(canon) != dg {
		return p.errf(defAt, "%s: the definition does not have the recorded digest %s (edited by hand?); review it and run `toolgate pin --update`", what, dg)
	}
	if l.Definitions[surface] == nil {
		l.Definitions[surface] = map[string]json.RawMessage{}
	}
	l.Definitions[surface][tool] = canon
	return nil
}

// describe names a token's JSON type for an error message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		if len(v) > 80 {
			v = v[:80] + "…"
		}
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}
