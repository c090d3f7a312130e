package grantcheck

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCompileFastSubset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema string
		fast   bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string","description":"x"}},"required":["a"],"additionalProperties":false}`, true},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":["integer","null"],"minimum":0,"exclusiveMaximum":10}}}`, true},
		{`{"type":"object","properties":{"m":{"enum":["r","w",null,true]},"c":{"const":"x"},"s":{"minLength":1,"maxLength":5}}}`, true},
		{`{"type":"object","properties":{"o":{"type":"object"},"l":{"type":"array"}}}`, true},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","pattern":"^a"}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"string","format":"uuid"}}}`, false},
		{`{"type":"object","properties":{"a":{"enum":[1,2]}}}`, false},
		{`{"type":"object","properties":{"a":{"minimum":0.30000000000000001}}}`, false},
		{`{"type":"object","properties":{"a":{"items":{"type":"string"}}}}`, false},
		{`{"type":"object","properties":{"a":true}}`, false},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, false},
		{`{"type":"object","$ref":"#/$defs/x","$defs":{"x":{}}}`, false},
		{`{"type":"object","properties":{"a":{"type":"wat"}}}`, false},
	}
	for _, tt := range tests {
		var doc map[string]any
		dec := json.NewDecoder(strings.NewReader(tt.schema))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if got := compileFast(doc) != nil; got != tt.fast {
			t.Errorf("compileFast(%s) fast=%v, want %v", tt.schema, got, tt.fast)
		}
	}
}

// randomSchema builds a flat object schema mostly inside the fast subset,
// with bounds that float64 does and does not hold exactly.
func randomSchema(r *rand.Rand) string {
	types := []string{"string", "number", "integer", "boolean", "null", "object", "array"}
	numbers := []string{"0", "-1", "1", "2.5", "3", "0.1", "1e21", "9007199254740993", "0.30000000000000001", "-0", "1e-7"}
	scalars := []string{`"a"`, `"abc"`, `""`, `"äöü"`, "true", "false", "null", "1", "2.5"}
	var props []string
	names := []string{"a", "b", "c", "d"}
	for _, name := range names {
		if r.IntN(4) == 0 {
			continue
		}
		var kw []string
		if r.IntN(2) == 0 {
			if r.IntN(3) == 0 {
				kw = append(kw, fmt.Sprintf(`"type":[%q,%q]`, types[r.IntN(len(types))], types[r.IntN(len(types))]))
			} else {
				kw = append(kw, fmt.Sprintf(`"type":%q`, types[r.IntN(len(types))]))
			}
		}
		if r.IntN(4) == 0 {
			var vals []string
			for range 1 + r.IntN(3) {
				vals = append(vals, scalars[r.IntN(len(scalars))])
			}
			kw = append(kw, `"enum":[`+strings.Join(vals, ",")+`]`)
		}
		if r.IntN(6) == 0 {
			kw = append(kw, `"const":`+scalars[r.IntN(len(scalars))])
		}
		for _, k := range []string{"minLength", "maxLength"} {
			if r.IntN(4) == 0 {
				kw = append(kw, fmt.Sprintf(`%q:%d`, k, r.IntN(5)))
			}
		}
		for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			if r.IntN(4) == 0 {
				kw = append(kw, fmt.Sprintf(`%q:%s`, k, numbers[r.IntN(len(numbers))]))
			}
		}
		if r.IntN(8) == 0 {
			kw = append(kw, `"description":"d"`)
		}
		props = append(props, fmt.Sprintf(`%q:{%s}`, name, strings.Join(kw, ",")))
	}
	s := `{"type":"object","properties":{` + strings.Join(props, ",") + `}`
	if r.IntN(2) == 0 {
		s += `,"additionalProperties":false`
	}
	if r.IntN(2) == 0 {
		s += fmt.Sprintf(`,"required":[%q]`, names[r.IntN(len(names))])
	}
	if r.IntN(5) == 0 {
		s += `,"$schema":"http://json-schema.org/draft-07/schema#"`
	}
	return s + "}"
}

func randomArgs(r *rand.Rand, extra string, num float64) map[string]any {
	pool := []any{"", "a", "abc", "abcdef", "äöü", extra, 0.0, -1.0, 1.0, 2.5, 3.0, 0.1, 0.3, 1e21, 9007199254740992.0, 1e-7, num,
		true, false, nil, []any{}, map[string]any{}}
	args := map[string]any{}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		if r.IntN(3) > 0 {
			args[name] = pool[r.IntN(len(pool))]
		}
	}
	return args
}

// FuzzFastSchema is the differential test of the fast path: whenever it
// accepts arguments, the library must accept them too.
func FuzzFastSchema(f *testing.F) {
	for i := range uint64(20) {
		f.Add(i, i*7919, "x", 0.5)
	}
	f.Fuzz(func(t *testing.T, seed1, seed2 uint64, extra string, num float64) {
		r := rand.New(rand.NewPCG(seed1, seed2))
		raw := randomSchema(r)
		s, err := compileSchema("toolgate:///fuzz.json", []byte(raw))
		if err != nil {
			return // e.g. a type list naming one type twice: refused at compile
		}
		if s.fast == nil {
			return
		}
		for range 8 {
			args := randomArgs(r, extra, num)
			if s.fast.accepts(args) {
				if err := s.lib.Validate(args); err != nil {
					t.Fatalf("fast path accepts %v under %s, library refuses: %v", args, raw, err)
				}
			}
		}
	})
}

// The differential check over many seeds runs as an ordinary test too, and
// asserts the fast path is used, not just consistent.
func TestFastSchemaAgreesWithLibrary(t *testing.T) {
	t.Parallel()
	fastAccepts, libAccepts := 0, 0
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 42))
		raw := randomSchema(r)
		s, err := compileSchema("toolgate:///t.json", []byte(raw))
		if err != nil {
			continue // e.g. a type list naming one type twice: refused at compile
		}
		if s.fast == nil {
			continue
		}
		for range 8 {
			args := randomArgs(r, "zz", 4)
			libOK := s.lib.Validate(args) == nil
			if libOK {
				libAccepts++
			}
			if s.fast.accepts(args) {
				fastAccepts++
				if !libOK {
					t.Fatalf("fast path accepts %v under %s; the library refuses", args, raw)
				}
			}
		}
	}
	// The fast path only defers for numbers it cannot compare exactly, so
	// it should accept nearly everything the library does.
	if libAccepts == 0 || float64(fastAccepts) < 0.9*float64(libAccepts) {
		t.Errorf("fast path accepted %d of the %d argument sets the library accepts", fastAccepts, libAccepts)
	}
}
