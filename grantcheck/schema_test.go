package grantcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// drafts are the JSON Schema drafts a tool may publish its input schema in,
// by their $schema (empty: none, which is 2020-12).
var drafts = []string{
	"",
	"https://json-schema.org/draft/2020-12/schema",
	"https://json-schema.org/draft/2019-09/schema",
	"http://json-schema.org/draft-07/schema#",
	"http://json-schema.org/draft-06/schema#",
	"http://json-schema.org/draft-04/schema#",
}

// withDraft is body, a schema object's members, under $schema draft.
func withDraft(draft, body string) string {
	if draft == "" {
		return "{" + body + "}"
	}
	return fmt.Sprintf(`{"$schema":%q,%s}`, draft, body)
}

// TestCompileSchemaEveryDraftConcurrently compiles schemas of every draft
// at once, as the first compilations of a process: each draft's
// metaschema rejects what it rejects, whichever goroutine compiles first.
func TestCompileSchemaEveryDraftConcurrently(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for i, draft := range drafts {
		for j := range 4 {
			wg.Go(func() {
				url := fmt.Sprintf("toolgate:///t/%d-%d.json", i, j)
				bad := withDraft(draft, `"type":"object","properties":{"n":{"type":"string","minLength":-1}}`)
				if _, err := compileSchema(url, []byte(bad)); err == nil || !strings.Contains(err.Error(), "invalid JSON Schema: at /properties/n/minLength") {
					t.Errorf("draft %q: minLength -1 compiled (%v)", draft, err)
				}
				good := withDraft(draft, `"type":"object","properties":{"n":{"type":"string","maxLength":3}},"required":["n"]`)
				s, err := compileSchema(url, []byte(good))
				if err != nil {
					t.Errorf("draft %q: %v", draft, err)
					return
				}
				if err := s.validate(map[string]any{"n": "abc"}); err != nil {
					t.Errorf("draft %q: valid arguments refused: %v", draft, err)
				}
				if err := s.validate(map[string]any{"n": "abcd"}); err == nil || !strings.Contains(err.Error(), `argument "n"`) {
					t.Errorf("draft %q: a 4-character n passed maxLength 3 (%v)", draft, err)
				}
			})
		}
	}
	wg.Wait()
}

// TestCompileSchemaFormats pins which drafts assert "format": draft-07 and
// earlier do, 2019-09 and 2020-12 (and a schema without $schema) treat it
// as an annotation, as their specifications say.
func TestCompileSchemaFormats(t *testing.T) {
	t.Parallel()
	for _, draft := range drafts {
		s, err := compileSchema("toolgate:///t/format.json", []byte(withDraft(draft, `"type":"object","properties":{"d":{"type":"string","format":"date"}}`)))
		if err != nil {
			t.Fatalf("draft %q: %v", draft, err)
		}
		err = s.validate(map[string]any{"d": "2026-13-45"})
		asserted := strings.Contains(draft, "draft-0")
		if asserted && (err == nil || !strings.Contains(err.Error(), `argument "d"`)) {
			t.Errorf("draft %q: an impossible date passed format: date (%v)", draft, err)
		}
		if !asserted && err != nil {
			t.Errorf("draft %q: format is an annotation, yet: %v", draft, err)
		}
	}
}

// TestCompileSchemaLoadsNothing: a $ref outside the schema is refused
// whatever its scheme; the validator reads no file and fetches no URL.
func TestCompileSchemaLoadsNothing(t *testing.T) {
	t.Parallel()
	other := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(other, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"file://" + other, other, "http://127.0.0.1:1/s.json", "https://example.com/s.json", "other.json"} {
		raw := fmt.Sprintf(`{"type":"object","properties":{"x":{"$ref":%q}}}`, ref)
		_, err := compileSchema("toolgate:///t/ref.json", []byte(raw))
		if err == nil || !strings.Contains(err.Error(), "invalid JSON Schema") {
			t.Errorf("$ref %s compiled (%v)", ref, err)
		}
	}
}

// TestCompileSchemaHostile: recursion through $ref (a loop, and a schema
// that nests itself) compiles and validates in bounded time, and a $ref
// that only points at itself is refused or fails validation, never hangs.
func TestCompileSchemaHostile(t *testing.T) {
	t.Parallel()
	tree, err := compileSchema("toolgate:///t/tree.json", []byte(`{"type":"object","properties":{"kid":{"$ref":"#"}},"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	deep := map[string]any{}
	for range 200 {
		deep = map[string]any{"kid": deep}
	}
	if err := tree.validate(deep); err != nil {
		t.Errorf("a 200-deep tree refused: %v", err)
	}
	deep["other"] = 1
	if err := tree.validate(deep); err == nil {
		t.Error("an undeclared member passed additionalProperties: false")
	}
	loop := `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`
	if s, err := compileSchema("toolgate:///t/loop.json", []byte(loop)); err == nil {
		if err := s.validate(map[string]any{"x": 1}); err == nil {
			t.Error("a $ref loop accepted an argument")
		}
	}
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 2000 {
		fmt.Fprintf(&b, `"p%d":{"type":"string"},`, i)
	}
	b.WriteString(`"q":{"type":"integer"}}}`)
	wide, err := compileSchema("toolgate:///t/wide.json", []byte(b.String()))
	if err != nil {
		t.Fatalf("a 2,000-member schema: %v", err)
	}
	if err := wide.validate(map[string]any{"p1999": 1}); err == nil || !strings.Contains(err.Error(), `argument "p1999"`) {
		t.Errorf("an integer passed p1999's type: string (%v)", err)
	}
}

// TestCompileSchemaTooWide: a schema of more objects than toolgate
// compiles (a hostile server's 20,000 properties) is refused at once, with
// a reason; one at the bound compiles.
func TestCompileSchemaTooWide(t *testing.T) {
	t.Parallel()
	wide := func(props int) []byte {
		var sb strings.Builder
		sb.WriteString(`{"type":"object","properties":{`)
		for i := range props {
			fmt.Fprintf(&sb, `"p%d":{"type":"string"},`, i)
		}
		sb.WriteString(`"q":{"type":"integer"}}}`)
		return []byte(sb.String())
	}
	if _, err := compileSchema("toolgate:///t/huge.json", wide(20000)); err == nil || !strings.Contains(err.Error(), "more than 4096 objects") {
		t.Errorf("a 20,000-property schema: %v, want refused as too large", err)
	}
	// The root, properties and q are 3 objects: 4,093 more fill the bound.
	if _, err := compileSchema("toolgate:///t/bound.json", wide(maxSchemaNodes-3)); err != nil {
		t.Errorf("a schema of exactly %d objects: %v", maxSchemaNodes, err)
	}
	if _, err := compileSchema("toolgate:///t/over.json", wide(maxSchemaNodes-2)); err == nil {
		t.Errorf("a schema of %d objects compiled", maxSchemaNodes+1)
	}
	nested := `{"type":"object","properties":{"a":{"type":"array","items":` + strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000) + `}}}`
	if _, err := compileSchema("toolgate:///t/nested.json", []byte(nested)); err == nil {
		t.Error("a schema of 5,000 nested arrays compiled")
	}
}

// BenchmarkCompileSchemaWide compiles the widest input schema toolgate
// takes (4,096 objects, ~0.1 MB). The library's compile queue searches its
// list on every enqueue, so the cost grows with the square of the
// subschemas: the figure to watch when the bound moves.
func BenchmarkCompileSchemaWide(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"type":"object","properties":{`)
	for i := range maxSchemaNodes - 3 {
		fmt.Fprintf(&sb, `"p%d":{"type":"string"},`, i)
	}
	sb.WriteString(`"q":{"type":"integer"}}}`)
	raw := []byte(sb.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileSchema("toolgate:///t/wide.json", raw); err != nil {
			b.Fatal(err)
		}
	}
}
