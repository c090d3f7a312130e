package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/bundled"
)

// MaxFileBytes caps the size of a workspace file (and of a bundled pack).
// Real workspaces are a few kilobytes; the cap keeps a wrong path or a
// hostile file from exhausting memory before any check runs.
const MaxFileBytes = 8 << 20

// Load reads and strictly validates the workspace file at path. The error,
// when not nil, is an ErrorList holding every problem found, each with
// FILE:LINE:COL. Checks that need the engines (requires, grants) are run by
// their packages on the returned value.
//
// With errors, Load still returns what it could decode when the file is
// YAML that reads as a workspace at all, with the declarations holding
// errors marked (Damaged, Unread): that value exists so that `toolgate
// check` can run the later checks on it and list every problem at once.
// It is never to be served — a caller that gets an error stops there, as
// the gateway does (fail-closed). The workspace is nil when nothing could
// be decoded (unreadable or oversized file, YAML syntax error, not a
// mapping, alias expansion or error count over its bound).
func Load(path string) (*Workspace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read workspace: %w (pass -w FILE or set TOOLGATE_WORKSPACE)", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read workspace %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse is Load on bytes already read; name is used in error positions.
func Parse(name string, data []byte) (*Workspace, error) {
	first := Pos{File: name, Line: 1, Col: 1}
	if len(data) > MaxFileBytes {
		return nil, ErrorList{Errorf(first, "the workspace file is larger than %d MiB; a workspace declares surfaces and agents, not data — check the path", MaxFileBytes>>20)}
	}
	root, errs := parseDocument(name, data)
	if errs != nil {
		return nil, errs.Err()
	}
	if isNull(root) {
		return nil, ErrorList{Errorf(first, "the workspace file is empty; start it with version: 1")}
	}
	return decodeWorkspace(name, data, root)
}

// decodeWorkspace is the loader's own work on the parsed document root of
// data: decoding into the declarations, bundled packs, then the checks.
func decodeWorkspace(name string, data []byte, root *yaml.Node) (*Workspace, error) {
	d := newDecoder(name, data, root)
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "a workspace file is a mapping of keys to values (version:, gateway:, command_packs:, ...), not a %s", kindName(root))
		return nil, d.errs.Err()
	}
	sum := sha256.Sum256(data)
	ws := &Workspace{Path: name, Revision: hex.EncodeToString(sum[:])}
	d.unread = &ws.Unread
	d.push("workspace")
	d.decodeStruct(root, reflect.ValueOf(ws).Elem())
	if d.exhausted {
		return nil, capErrors(d.errs)
	}
	for _, p := range ws.CommandPacks {
		if p != nil && p.Use != "" {
			d.expandBundled(p)
		}
	}
	v := &validator{ws: ws, errs: &d.errs}
	v.run(root)
	if err := capErrors(d.errs); err != nil {
		if len(d.errs) >= maxErrors {
			return nil, err // too broken for the later checks to add anything useful
		}
		return ws, err
	}
	return ws, nil
}

// capErrors sorts the errors and keeps the first maxErrors, saying so when
// it drops any or when decoding stopped early.
func capErrors(errs ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	errs.Sort()
	if len(errs) < maxErrors {
		return errs
	}
	last := errs[maxErrors-1].Pos
	errs = append(errs[:maxErrors:maxErrors], Errorf(last, "too many errors (%d or more); fix these and load again", maxErrors))
	return errs
}

// yamlLineRE and yamlAnchorRE read yaml.v3's messages, compiled when
// first needed: a package initialiser runs in every toolgate process.
var (
	yamlLineRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })
	yamlAnchorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`) })
)

// parseDocument parses exactly one YAML document into its root node with
// yaml.v3, the one YAML parser of the workspace; nil with no errors means
// the file holds no document at all.
func parseDocument(name string, data []byte) (*yaml.Node, ErrorList) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, ErrorList{syntaxError(name, data, err)}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		p := Pos{File: name, Line: max(extra.Line, 1), Col: max(extra.Column, 1)}
		return nil, ErrorList{Errorf(p, "a workspace file holds one YAML document; remove the extra '---' document")}
	case !errors.Is(err, io.EOF):
		return nil, ErrorList{syntaxError(name, data, err)}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// syntaxError positions a YAML parser error. The parser names a line for
// most errors but never a column; an unknown anchor is located by its first
// use.
func syntaxError(name string, data []byte, err error) *Error {
	line, col, msg := 1, 1, err.Error()
	if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
		if l, convErr := strconv.Atoi(m[1]); convErr == nil && l > 0 {
			line = l
		}
		msg = m[2]
	} else if m := yamlAnchorRE().FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = 1 + bytes.Count(data[:i], []byte("\n"))
			col = 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:i], '\n')+1:i])
		}
	}
	return Errorf(Pos{File: name, Line: line, Col: col}, "YAML syntax: %s", strings.TrimPrefix(msg, "yaml: "))
}

// packOverrides are the fields a `use: bundled/<id>` entry may set; the
// commands themselves always come from the bundle.
var packOverrides = map[string]bool{
	"ID": true, "Use": true, "Permission": true, "PermissionOverrides": true,
	"Timeout": true, "TimeoutOverrides": true, "MaxOutput": true,
	"MaxMemory": true, "MaxMemoryOverrides": true,
	"CredentialsRef": true, "Env": true, "Cwd": true, "Description": true,
}

// expandBundled fills a `use:` pack from the bundled declaration, keeping
// what the workspace overrides.
func (d *decoder) expandBundled(p *CommandPack) {
	// fail records a problem with the use: itself: the pack's commands
	// are unknown, and without an id of its own so is its name.
	fail := func(errs ...*Error) {
		d.errs = append(d.errs, errs...)
		p.Damaged, p.UnreadCommands = true, true
		if p.ID == "" && d.unread != nil {
			d.unread.Surfaces = true
		}
	}
	id, ok := strings.CutPrefix(p.Use, "bundled/")
	if !ok || id == "" {
		fail(Errorf(p.Pos, "use: %q must name a bundled pack as bundled/<id>; bundled packs are: %s", p.Use, strings.Join(bundled.IDs(), ", ")))
		return
	}
	name, data, err := bundled.Source(id)
	if err != nil {
		fail(Errorf(p.Pos, "use: %v", err))
		return
	}
	if len(p.Commands) > 0 || len(p.Requires) > 0 {
		fail(Errorf(p.Pos, "pack using %q cannot declare commands or requires; they come from the bundle (declare a pack of your own instead)", p.Use))
		return
	}
	root, errs := parseDocument(name, data)
	if root == nil && errs == nil {
		errs = ErrorList{Errorf(Pos{File: name, Line: 1, Col: 1}, "bundled pack is empty")}
	}
	var base CommandPack
	if errs == nil {
		bd := newDecoder(name, data, root)
		bd.push("bundled pack")
		bd.decodeStruct(root, reflect.ValueOf(&base).Elem())
		errs = bd.errs
	}
	if len(errs) > 0 {
		fail(errs...)
		return
	}
	over := reflect.ValueOf(p).Elem()
	merged := reflect.ValueOf(&base).Elem()
	for name := range packOverrides {
		if f := over.FieldByName(name); !f.IsZero() {
			merged.FieldByName(name).Set(f)
		}
	}
	base.Pos, base.KeyPos, base.Bundled, base.Damaged = p.Pos, p.KeyPos, true, p.Damaged
	if base.ID == "" {
		base.ID = id
	}
	*p = base
}
