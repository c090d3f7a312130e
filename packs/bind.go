package packs

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/workspace"
)

// bindPaths gives each argument bound by roots a descriptor number and
// returns the arguments BuildArgv should see: the bound values replaced by
// /dev/fd/N. Each bound path must lead beneath its root now, and exist (or,
// for a parameter cmd lists under creates:, be creatable): this runs at
// Prepare, before the call is held for approval, so nobody approves a call
// that cannot run. Run opens it again, beneath the root, race-free. A
// refusal names the parameter.
func bindPaths(cmd *workspace.Command, args map[string]any, roots map[string]string, dir string) ([]BoundPath, map[string]any, error) {
	if len(roots) == 0 {
		return nil, args, nil
	}
	// A parameter that stands only in output.write_to is not handed to the
	// command: Run opens the target itself, beneath the same root, and
	// creates it when missing (openOutputBeneath), so a destination that
	// does not exist yet is not refused here.
	inArgv := workspace.Placeholders(cmd.Argv)
	params := make([]string, 0, len(roots))
	for p := range roots {
		if slices.Contains(inArgv, p) || cmd.Output.WriteTo == "" {
			params = append(params, p)
		}
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
		b := BoundPath{Param: param, Value: value, Path: absUncleaned(dir, value), Root: root, FD: firstBoundFD + len(bound),
			Create: slices.Contains(cmd.Creates, param)}
		if _, err := relBeneath(root, b.Path); err != nil {
			return "", &ArgError{Param: param, Msg: fmt.Sprintf("%q %v", value, err)}
		}
		if err := probeBound(b); err != nil {
			msg := fmt.Sprintf("%q %v", value, err)
			if errors.Is(err, errNotExist) && !b.Create && cmd.Effects != workspace.EffectRead {
				msg += " (for a file the command writes, a pack author lists the parameter under creates: and the gateway creates it)"
			}
			return "", &ArgError{Param: param, Msg: msg}
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

// probeBound checks that b can be bound when the call runs: an existing
// file passes every check Run makes (openBound), a missing one of a
// parameter listed under creates: has its directory beneath the root and
// is not a symbolic link.
func probeBound(b BoundPath) error {
	f, err := openBound(b)
	if err == nil {
		return f.Close()
	}
	if !b.Create || !errors.Is(err, errNotExist) {
		return err
	}
	return probeCreate(b)
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
