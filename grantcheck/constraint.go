package grantcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/strictjson"
	"github.com/toolgate/toolgate/workspace"
)

// constraint is one parameter's param_constraints, compiled once: the
// pattern anchored and compiled, the path_within root cleaned and resolved.
type constraint struct {
	param    string
	pos      workspace.Pos
	enum     []any
	constVal any
	hasConst bool
	pattern  *regexp.Regexp
	min, max *float64
	// minExact and maxExact are min and max as exact decimals.
	minExact, maxExact strictjson.Decimal
	maxLen             int // -1: none
	// within is the resolved root; withinAsWritten is what the workspace says.
	within, withinAsWritten string
}

// compileConstraint compiles c; wsDir resolves a relative path_within root.
func compileConstraint(c *workspace.Constraint, wsDir string) (*constraint, error) {
	k := &constraint{param: c.Param, pos: c.Pos, enum: c.Enum, constVal: c.Const, hasConst: c.HasConst,
		min: c.Minimum, max: c.Maximum, maxLen: -1, withinAsWritten: c.PathWithin}
	if c.MaxLength != nil {
		k.maxLen = *c.MaxLength
	}
	if k.min != nil {
		k.minExact = exactDecimal(*k.min)
	}
	if k.max != nil {
		k.maxExact = exactDecimal(*k.max)
	}
	if c.Pattern != "" {
		re, err := regexp.Compile(anchor(c.Pattern))
		if err != nil {
			return nil, fmt.Errorf("parameter %q: pattern %q is not a valid RE2 expression: %v", c.Param, c.Pattern, err)
		}
		k.pattern = re
	}
	if k.min != nil && k.max != nil && *k.min > *k.max {
		return nil, fmt.Errorf("parameter %q: minimum %v is above maximum %v, so no call could pass", c.Param, *k.min, *k.max)
	}
	if c.PathWithin != "" {
		root := c.PathWithin
		if !filepath.IsAbs(root) {
			root = filepath.Join(wsDir, root)
		}
		r, err := ResolvePath(root)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: path_within %q cannot be resolved: %v", c.Param, c.PathWithin, err)
		}
		k.within = r
	}
	return k, nil
}

// anchor makes an RE2 pattern match the whole value.
func anchor(p string) string { return "^(?:" + p + ")$" }

// check tests the constraint against the call's arguments; baseDir resolves
// a relative path argument.
func (k *constraint) check(args map[string]any, baseDir string) error {
	v, ok := args[k.param]
	if !ok {
		return fmt.Errorf("parameter %q is bound by the grant's param_constraints but was not given", k.param)
	}
	if k.enum != nil && !inValues(v, k.enum) {
		return fmt.Errorf("parameter %q: %s is not one of %s", k.param, show(v), showList(k.enum))
	}
	if k.hasConst && !jsonEqual(v, k.constVal) {
		return fmt.Errorf("parameter %q: %s is not the only allowed value %s", k.param, show(v), show(k.constVal))
	}
	if items, isList := v.([]any); isList && k.within != "" && k.pattern == nil && k.maxLen < 0 {
		// A list of paths (a spread parameter such as rg's paths): every
		// item must be within the root.
		for i, it := range items {
			s, isString := it.(string)
			if !isString {
				return fmt.Errorf("parameter %q: item %d, %s, is not a string", k.param, i, show(it))
			}
			if err := k.checkWithin(s, baseDir); err != nil {
				return fmt.Errorf("%w (item %d)", err, i)
			}
		}
	} else if k.pattern != nil || k.maxLen >= 0 || k.within != "" {
		s, isString := v.(string)
		if !isString {
			return fmt.Errorf("parameter %q: %s is not a string", k.param, show(v))
		}
		if k.pattern != nil && !k.pattern.MatchString(s) {
			return fmt.Errorf("parameter %q: %s does not match the pattern %s", k.param, show(v), k.pattern)
		}
		if k.maxLen >= 0 {
			if n := utf8.RuneCountInString(s); n > k.maxLen {
				return fmt.Errorf("parameter %q: %d characters, more than the %d allowed", k.param, n, k.maxLen)
			}
		}
		if k.within != "" {
			if err := k.checkWithin(s, baseDir); err != nil {
				return err
			}
		}
	}
	if k.min != nil || k.max != nil {
		// Exactly, on the literal text the server will receive (exactnum.go).
		if _, isNum := number(v); !isNum {
			return fmt.Errorf("parameter %q: %s is not a number", k.param, show(v))
		}
		if k.min != nil && below(v, k.minExact) {
			return fmt.Errorf("parameter %q: %s is below the minimum %s", k.param, show(v), showFloat(*k.min))
		}
		if k.max != nil && above(v, k.maxExact) {
			return fmt.Errorf("parameter %q: %s is above the maximum %s", k.param, show(v), showFloat(*k.max))
		}
	}
	return nil
}

func (k *constraint) checkWithin(s, baseDir string) error {
	if s == "" || strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("parameter %q: %s is not a path", k.param, show(s))
	}
	p := s
	if !filepath.IsAbs(p) {
		p = baseDir + string(filepath.Separator) + p
	}
	r, err := ResolvePath(p)
	if err != nil {
		return fmt.Errorf("parameter %q: %s cannot be resolved: %v", k.param, show(s), err)
	}
	if !within(r, k.within) {
		return fmt.Errorf("parameter %q: %s is not within %s", k.param, show(s), k.withinAsWritten)
	}
	return nil
}

// number reads a JSON number however the arguments were decoded.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsNaN(f)
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// jsonEqual compares two decoded JSON values; numbers compare by value
// whatever their Go type.
func jsonEqual(a, b any) bool {
	if _, ok := number(a); ok {
		return numbersEqual(a, b)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for key, xv := range x {
			yv, ok := y[key]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

func inValues(v any, vals []any) bool {
	for _, e := range vals {
		if jsonEqual(v, e) {
			return true
		}
	}
	return false
}

// maxShown bounds how much of an argument a refusal repeats.
const maxShown = 120

// show prints a value for a refusal reason, shortened when long.
func show(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		if len(x) > maxShown {
			x = x[:maxShown] + "…"
		}
		return strconv.Quote(x)
	case float64:
		return showFloat(x)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprintf("%v", v)
		} else {
			s = string(b)
		}
	}
	if len(s) > maxShown {
		s = s[:maxShown] + "…"
	}
	return s
}

func showFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func showList(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = show(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// errTooManyLinks ends a symlink cycle.
var errTooManyLinks = errors.New("too many levels of symbolic links")
