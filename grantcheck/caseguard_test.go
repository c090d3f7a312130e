package grantcheck

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCaseGuard(t *testing.T) {
	t.Parallel()
	var schema any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{
		"entity_type":{"type":"string"},
		"filter":{"type":"object","properties":{"owner":{"type":"string"}}},
		"tags":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}}}}`), &schema); err != nil {
		t.Fatal(err)
	}
	g := compileCaseGuard(schema, 0)
	cases := []struct {
		args string
		want string // "" = accepted
	}{
		{`{"entity_type":"note"}`, ""},
		{`{"entity_type":"note","extra":1}`, ""},
		{`{"Entity_Type":"secret"}`, `argument "Entity_Type" differs only in case from the declared parameter "entity_type"`},
		{`{"ENTITY_TYPE":"secret"}`, `"ENTITY_TYPE"`},
		{`{"filter":{"Owner":"root"}}`, `argument "filter.Owner" differs only in case from the declared parameter "filter.owner"`},
		{`{"tags":[{"name":"a"},{"NAME":"b"}]}`, `argument "tags.1.NAME"`},
		{`{"filter":"not an object"}`, ""},
	}
	for _, c := range cases {
		var args map[string]any
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		err := g.check(args, "")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s refused: %v", c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.args, err, c.want)
		}
	}
	if compileCaseGuard(map[string]any{"type": "object"}, 0) != nil {
		t.Error("a schema with no property names needs no guard")
	}
	var nilGuard *caseGuard
	if err := nilGuard.check(map[string]any{"A": 1}, ""); err != nil {
		t.Errorf("nil guard refused: %v", err)
	}
}

func TestCaseVariantOfConstrainedParam(t *testing.T) {
	t.Parallel()
	if err := caseVariantOf(map[string]any{"entity_type": "note"}, "entity_type"); err != nil {
		t.Fatal(err)
	}
	err := caseVariantOf(map[string]any{"entity_type": "note", "Entity_Type": "secret"}, "entity_type")
	if err == nil || !strings.Contains(err.Error(), `"Entity_Type" differs only in case from the constrained parameter "entity_type"`) {
		t.Fatalf("got %v", err)
	}
}
