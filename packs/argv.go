package packs

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/workspace"
)

// integerRE matches a JSON integer literal, which is already canonical and
// may be too large for any Go integer type.
var integerRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// ArgError is a call argument that cannot be placed into a command's argv.
// It names the parameter so the refusal tells the caller what to change.
type ArgError struct {
	Param string
	Msg   string
}

func (e *ArgError) Error() string { return fmt.Sprintf("parameter %q: %s", e.Param, e.Msg) }

// BuildArgv fills a command's argv template with call arguments, value by
// value. Each placeholder fills exactly one argv element, alone ("{file}")
// or inside literal text ("--repo={repo}"); the result is never split and
// never given to a shell. Strings are used as given, numbers in canonical
// form (3, not 3.000000), booleans as true/false. Arrays fill one element
// per item only for parameters listed in cmd.Spread whose placeholder is a
// whole element; objects are refused.
//
// An element whose placeholder is absent (missing or null) is dropped,
// whether the placeholder is the whole element or sits inside literal text:
// an optional `--limit={n}` then simply disappears. Required parameters are
// enforced by the input schema before a call gets here.
//
// A value that would start an argv element with "-" is refused, since the
// program would read it as an option (argument injection), unless the
// parameter is listed in cmd.AllowDash or the element comes after a literal
// "--" element.
func BuildArgv(cmd *workspace.Command, args map[string]any) ([]string, error) {
	argv := make([]string, 0, len(cmd.Argv))
	afterDashDash := false
	for _, elem := range cmd.Argv {
		segs := workspace.ParseTemplate(elem)
		if len(segs) == 1 && segs[0].Param == "" {
			argv = append(argv, elem)
			if elem == "--" {
				afterDashDash = true
			}
			continue
		}
		dashOK := func(param string) bool {
			return afterDashDash || slices.Contains(cmd.AllowDash, param)
		}
		if len(segs) == 1 {
			items, err := wholeElement(cmd, segs[0], args, dashOK)
			if err != nil {
				return nil, err
			}
			argv = append(argv, items...)
			continue
		}
		s, present, err := fillElement(segs, args, dashOK)
		if err != nil {
			return nil, err
		}
		if present {
			argv = append(argv, s)
		}
	}
	return argv, nil
}

// wholeElement fills an element that is exactly one placeholder: zero
// elements when absent, one for a scalar, one per item for a spread array.
func wholeElement(cmd *workspace.Command, seg workspace.Segment, args map[string]any, dashOK func(string) bool) ([]string, error) {
	if _, isCred := seg.IsCredential(); isCred {
		return nil, credentialInArgv(seg.Param)
	}
	v, present := lookup(args, seg.Param)
	if !present {
		return nil, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		if !slices.Contains(cmd.Spread, seg.Param) {
			return nil, &ArgError{Param: seg.Param, Msg: "is a list, but this command takes one value here; pass a single string or number (a pack author can list the parameter under spread: to pass each item as its own argument)"}
		}
		out := make([]string, 0, rv.Len())
		for i := range rv.Len() {
			s, err := scalarString(seg.Param, rv.Index(i).Interface())
			if err != nil {
				return nil, &ArgError{Param: seg.Param, Msg: fmt.Sprintf("item %d: %s", i, err.(*ArgError).Msg)}
			}
			if strings.HasPrefix(s, "-") && !dashOK(seg.Param) {
				return nil, dashError(seg.Param, fmt.Sprintf("item %d (%q)", i, s))
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalarString(seg.Param, v)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(s, "-") && !dashOK(seg.Param) {
		return nil, dashError(seg.Param, fmt.Sprintf("%q", s))
	}
	return []string{s}, nil
}

// fillElement renders a template element mixing literal text and scalar
// placeholders. present is false when any placeholder is absent. Only a
// value that supplies the element's first character can make it look like
// an option, so only such a value is checked for a leading "-".
func fillElement(segs []workspace.Segment, args map[string]any, dashOK func(string) bool) (s string, present bool, err error) {
	var b strings.Builder
	for _, seg := range segs {
		if seg.Param == "" {
			b.WriteString(seg.Literal)
			continue
		}
		if _, isCred := seg.IsCredential(); isCred {
			return "", false, credentialInArgv(seg.Param)
		}
		v, ok := lookup(args, seg.Param)
		if !ok {
			return "", false, nil
		}
		if k := reflect.ValueOf(v).Kind(); k == reflect.Slice || k == reflect.Array {
			return "", false, &ArgError{Param: seg.Param, Msg: "is a list, but its placeholder sits inside other text where only a single value fits; pass a single string or number"}
		}
		val, err := scalarString(seg.Param, v)
		if err != nil {
			return "", false, err
		}
		if b.Len() == 0 && strings.HasPrefix(val, "-") && !dashOK(seg.Param) {
			return "", false, dashError(seg.Param, fmt.Sprintf("%q", val))
		}
		b.WriteString(val)
	}
	return b.String(), true, nil
}

// fillPath renders a single-value template such as output.write_to: every
// placeholder must be present and scalar.
func fillPath(tmpl string, args map[string]any) (string, error) {
	var b strings.Builder
	for _, seg := range workspace.ParseTemplate(tmpl) {
		if seg.Param == "" {
			b.WriteString(seg.Literal)
			continue
		}
		v, ok := lookup(args, seg.Param)
		if !ok {
			return "", &ArgError{Param: seg.Param, Msg: "is needed to name the output file but was not given"}
		}
		if k := reflect.ValueOf(v).Kind(); k == reflect.Slice || k == reflect.Array {
			return "", &ArgError{Param: seg.Param, Msg: "is a list, but it names the output file; pass a single path"}
		}
		val, err := scalarString(seg.Param, v)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

func lookup(args map[string]any, name string) (any, bool) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

func credentialInArgv(param string) error {
	return &ArgError{Param: param, Msg: "a credential may not be placed in argv, where ps and the audit would show it; pass it through the pack's env"}
}

func dashError(param, what string) error {
	return &ArgError{Param: param, Msg: fmt.Sprintf("value %s starts with \"-\" and would be read as an option by the program (argument injection); pass a value that does not start with \"-\" (a pack author can allow it with allow_dash: [%s] or by placing the placeholder after a literal \"--\")", what, param)}
}

// scalarString renders one scalar argument value canonically.
func scalarString(param string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return "", &ArgError{Param: param, Msg: "contains a NUL byte, which no command-line argument can hold; remove it"}
		}
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		// The literal text of the call, kept exactly: never through a
		// float, which would round 9007199254740993 to ...992.
		if integerRE.MatchString(x.String()) {
			return x.String(), nil
		}
		s, err := canonicalDecimal(x.String())
		if err != nil {
			return "", &ArgError{Param: param, Msg: fmt.Sprintf("%.40q %s", x.String(), err)}
		}
		return s, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return formatFloat(param, rv.Float())
	case reflect.String:
		return scalarString(param, rv.String())
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool()), nil
	case reflect.Map, reflect.Struct:
		return "", &ArgError{Param: param, Msg: "is an object, which cannot be passed as a command-line argument; pass a string, number or boolean"}
	case reflect.Slice, reflect.Array:
		return "", &ArgError{Param: param, Msg: "is a nested list; only strings, numbers and booleans can be passed as arguments"}
	}
	return "", &ArgError{Param: param, Msg: fmt.Sprintf("has unsupported type %T; pass a string, number or boolean", v)}
}

func formatFloat(param string, f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", &ArgError{Param: param, Msg: "is not a finite number"}
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}
