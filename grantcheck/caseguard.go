package grantcheck

import (
	"fmt"
	"sort"
	"strings"
)

// caseGuard refuses argument keys that equal a declared parameter except
// for case ("Entity_Type" beside a declared "entity_type"). A downstream
// written in Go binds such a key to the declared field (encoding/json
// matches field names case-insensitively) while the grant checked the
// exact name — the call would be decided as one thing and executed as
// another. Nested object schemas are guarded the same way.
type caseGuard struct {
	declared map[string]*caseGuard // declared name → guard of its value (nil: none)
	names    []string              // the declared names
	items    *caseGuard            // guard of array items
}

// compileCaseGuard builds the guard of a schema document (decoded JSON);
// nil when the schema declares no property names at any depth.
func compileCaseGuard(schema any, depth int) *caseGuard {
	obj, ok := schema.(map[string]any)
	if !ok || depth > 32 {
		return nil
	}
	g := &caseGuard{}
	if props, ok := obj["properties"].(map[string]any); ok && len(props) > 0 {
		g.declared = make(map[string]*caseGuard, len(props))
		for name, sub := range props {
			g.declared[name] = compileCaseGuard(sub, depth+1)
			g.names = append(g.names, name)
		}
		sort.Strings(g.names)
	}
	g.items = compileCaseGuard(obj["items"], depth+1)
	if g.declared == nil && g.items == nil {
		return nil
	}
	return g
}

// check walks v and reports the first key that differs only in case from
// a declared one; path names where, for the refusal.
func (g *caseGuard) check(v any, path string) error {
	if g == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if next, ok := g.declared[k]; ok {
				if next != nil {
					if err := next.check(sub, path+k+"."); err != nil {
						return err
					}
				}
				continue
			}
			// Not declared as written: refuse it if it is a declared name
			// in other case (a scan without allocating; undeclared keys
			// are rare).
			for _, name := range g.names {
				if strings.EqualFold(k, name) {
					return fmt.Errorf("argument %q differs only in case from the declared parameter %q; send %q", path+k, path+name, path+name)
				}
			}
		}
	case []any:
		for i, e := range x {
			if err := g.items.check(e, fmt.Sprintf("%s%d.", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// caseVariantOf refuses an argument key that differs only in case from a
// constrained parameter: the constraint binds the exact name, and a
// downstream that matches names case-insensitively would read the other.
func caseVariantOf(args map[string]any, param string) error {
	for k := range args {
		if k != param && strings.EqualFold(k, param) {
			return fmt.Errorf("argument %q differs only in case from the constrained parameter %q; send %q", k, param, param)
		}
	}
	return nil
}
