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
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/bundled"
)

// Load reads and strictly validates the workspace file at path. The error,
// when not nil, is an ErrorList holding every problem found, each with
// FILE:LINE:COL. Checks that need the engines (requires, grants) are run by
// their packages on the returned value.
func Load(path string) (*Workspace, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workspace: %w (pass -w FILE or set TOOLGATE_WORKSPACE)", err)
	}
	return Parse(path, data)
}

// Parse is Load on bytes already read; name is used in error positions.
func Parse(name string, data []byte) (*Workspace, error) {
	d := &decoder{file: name}
	root, ok := d.parseDocument(data)
	if !ok {
		return nil, d.errs.Err()
	}
	sum := sha256.Sum256(data)
	ws := &Workspace{Path: name, Revision: hex.EncodeToString(sum[:])}
	if root == nil {
		d.errs = append(d.errs, &Error{Pos: Pos{File: name, Line: 1, Col: 1}, Msg: "the workspace file is empty; start it with version: 1"})
		return nil, d.errs.Err()
	}
	d.decodeStruct(root, reflect.ValueOf(ws).Elem(), "workspace")
	for _, p := range ws.CommandPacks {
		if p != nil && p.Use != "" {
			d.expandBundled(p)
		}
	}
	v := &validator{ws: ws, errs: &d.errs}
	v.run(root)
	if err := d.errs.Err(); err != nil {
		return nil, err
	}
	return ws, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseDocument parses exactly one YAML document into its root node.
func (d *decoder) parseDocument(data []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		line, msg := 1, err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			fmt.Sscan(m[1], &line)
			msg = m[2]
		}
		d.errs = append(d.errs, &Error{Pos: Pos{File: d.file, Line: line, Col: 1}, Msg: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")})
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.errorf(&extra, "a workspace file holds one YAML document; remove the extra '---' document")
		return nil, false
	}
	if len(doc.Content) == 0 {
		return nil, true
	}
	return doc.Content[0], true
}

// packOverrides are the fields a `use: bundled/<id>` entry may set; the
// commands themselves always come from the bundle.
var packOverrides = map[string]bool{
	"ID": true, "Use": true, "Permission": true, "PermissionOverrides": true,
	"Timeout": true, "TimeoutOverrides": true, "MaxOutput": true,
	"CredentialsRef": true, "Env": true, "Cwd": true, "Description": true,
}

// expandBundled fills a `use:` pack from the bundled declaration, keeping
// what the workspace overrides.
func (d *decoder) expandBundled(p *CommandPack) {
	id, ok := strings.CutPrefix(p.Use, "bundled/")
	if !ok || id == "" {
		d.errs = append(d.errs, Errorf(p.Pos, "use: %q must name a bundled pack as bundled/<id>; bundled packs are: %s", p.Use, strings.Join(bundled.IDs(), ", ")))
		return
	}
	name, data, err := bundled.Source(id)
	if err != nil {
		d.errs = append(d.errs, Errorf(p.Pos, "use: %v", err))
		return
	}
	if len(p.Commands) > 0 || len(p.Requires) > 0 {
		d.errs = append(d.errs, Errorf(p.Pos, "pack using %q cannot declare commands or requires; they come from the bundle (declare a pack of your own instead)", p.Use))
		return
	}
	bd := &decoder{file: name}
	root, ok := bd.parseDocument(data)
	var base CommandPack
	if ok && root != nil {
		bd.decodeStruct(root, reflect.ValueOf(&base).Elem(), "bundled pack")
	}
	if len(bd.errs) > 0 {
		d.errs = append(d.errs, bd.errs...)
		return
	}
	over := reflect.ValueOf(p).Elem()
	merged := reflect.ValueOf(&base).Elem()
	for name := range packOverrides {
		if f := over.FieldByName(name); !f.IsZero() {
			merged.FieldByName(name).Set(f)
		}
	}
	base.Pos, base.KeyPos, base.Bundled = p.Pos, p.KeyPos, true
	if base.ID == "" {
		base.ID = id
	}
	*p = base
}
