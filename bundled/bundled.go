// Package bundled holds the command packs shipped inside the toolgate binary.
// A bundled pack is inert: it does nothing until a workspace declares it with
// `use: bundled/<id>` and a grant names it.
package bundled

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed packs/*.yaml
var files embed.FS

// Source returns the YAML of bundled pack id and the name to report errors
// against.
func Source(id string) (name string, data []byte, err error) {
	name = "packs/" + id + ".yaml"
	data, err = files.ReadFile(name)
	if err != nil {
		return "", nil, fmt.Errorf("no bundled pack %q; bundled packs are: %s", id, strings.Join(IDs(), ", "))
	}
	return "bundled/" + name, data, nil
}

// IDs lists the bundled packs, sorted.
func IDs() []string {
	entries, _ := fs.ReadDir(files, "packs")
	var ids []string
	for _, e := range entries {
		ids = append(ids, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(ids)
	return ids
}
