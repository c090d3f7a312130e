package packs

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/workspace"
)

// bindPaths gives each argument bound by roots a descriptor number and
// returns the arguments BuildArgv should see: the bound values replaced by
// /dev/fd/N. Each bound path must lead beneath its root now (Run opens it
// again, beneath the root, race-free); a refusal names the parameter.
func bindPaths(args map[string]any, roots map[string]string, dir string) ([]BoundPath, map[string]any, error) {
	if len(roots) == 0 {
		return nil, args, nil
	}
	params := make([]string, 0, len(roots))
	for p := range roots {
		params = append(params, p)
	}
	sort.Strings(params)
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	var bound []BoundPath
	bind := func(param, value, root string) (string, error) {
		if value == "" || strings.IndexByte(value, 0) >= 0 {
			return "", &ArgError{Param: param, Msg: fmt.Sprintf("%q is not a path", value)}
		}
		if !filepath.IsAbs(root) {
			return "", fmt.Errorf("parameter %q: path_within root %q is not absolute (a gateway bug: roots come resolved from the policy)", param, root)
		}
		b := BoundPath{Param: param, Value: value, Path: absUncleaned(dir, value), Root: root, FD: firstBoundFD + len(bound)}
		if _, err := relBeneath(root, b.Path); err != nil {
			return "", &ArgError{Param: param, Msg: fmt.Sprintf("%q %v", value, err)}
		}
		bound = append(bound, b)
		return devFD(b.FD), nil
	}
	for _, p := range params {
		v, ok := lookup(args, p)
		if !ok {
			continue
		}
		switch x := v.(type) {
		case string:
			fd, err := bind(p, x, roots[p])
			if err != nil {
				return nil, nil, err
			}
			out[p] = fd
		case []any:
			items := make([]any, len(x))
			for i, it := range x {
				s, isString := it.(string)
				if !isString {
					return nil, nil, &ArgError{Param: p, Msg: fmt.Sprintf("item %d is not a string; a path_within parameter takes paths", i)}
				}
				fd, err := bind(p, s, roots[p])
				if err != nil {
					return nil, nil, err
				}
				items[i] = fd
			}
			out[p] = items
		default:
			return nil, nil, &ArgError{Param: p, Msg: "is bound by path_within but is not a path (a string, or a list of strings)"}
		}
	}
	return bound, out, nil
}

// writeRoot is the root a write_to template is bound beneath: that of the
// path_within parameters it names (all the same root), or "" for none.
func writeRoot(tmpl string, roots map[string]string) (string, error) {
	root := ""
	for _, seg := range workspace.ParseTemplate(tmpl) {
		r, ok := roots[seg.Param]
		if seg.Param == "" || !ok {
			continue
		}
		if root != "" && r != root {
			return "", fmt.Errorf("names parameters bound to different path_within roots (%s, %s); bind them to one", root, r)
		}
		root = r
	}
	return root, nil
}

// absUncleaned makes p absolute against dir without cleaning it: ".."
// must apply to the directory a name resolves to, not to the text before
// it.
func absUncleaned(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return dir + "/" + p
}
