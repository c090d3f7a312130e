package packs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestStructuredObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   any
		want map[string]any
	}{
		{"object as is", map[string]any{"a": json.Number("1")}, map[string]any{"a": json.Number("1")}},
		{"empty object as is", map[string]any{}, map[string]any{}},
		{"array wrapped", []any{"items", "name"}, map[string]any{"result": []any{"items", "name"}}},
		{"string wrapped", "toolgate", map[string]any{"result": "toolgate"}},
		{"number wrapped", json.Number("1.50"), map[string]any{"result": json.Number("1.50")}},
		{"boolean wrapped", false, map[string]any{"result": false}},
		{"null wrapped", nil, map[string]any{"result": nil}},
		// An object that already has a result key is still the command's
		// own object: it is not wrapped a second time.
		{"object with result key", map[string]any{"result": 1}, map[string]any{"result": 1}},
	}
	for _, tt := range tests {
		if got := StructuredObject(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: StructuredObject(%#v) = %#v, want %#v", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestOutputSchemaIsAnObjectSchema(t *testing.T) {
	t.Parallel()
	var s map[string]any
	if err := json.Unmarshal([]byte(OutputSchema), &s); err != nil {
		t.Fatalf("OutputSchema is not JSON: %v", err)
	}
	if s["type"] != "object" {
		t.Errorf("OutputSchema type = %v, want object (MCP requires structuredContent to be an object)", s["type"])
	}
}

// TestRunStructuredContentIsAlwaysAnObject runs real jq: whatever JSON
// value a parse: json command prints — the bundled json-tools keys' array,
// a string, null — its structuredContent is an object, and a text command
// gets none.
func TestRunStructuredContentIsAlwaysAnObject(t *testing.T) {
	t.Parallel()
	jq := bundledJQ(t)
	r := newTestRunner(t, nil)
	sample := "testdata/sample.json"
	t.Run("bundled keys returns an array", func(t *testing.T) {
		t.Parallel()
		res := mustRun(t, r, jq, commandOf(t, jq, "keys"), map[string]any{"file": sample})
		want := map[string]any{"result": []any{"name", "tags", "version"}}
		if res.Err != "" || !reflect.DeepEqual(res.StructuredContent, want) {
			t.Errorf("Err %q, StructuredContent = %#v, want %#v", res.Err, res.StructuredContent, want)
		}
	})
	tests := []struct {
		name   string
		filter string
		want   map[string]any
	}{
		{"a string", ".name", map[string]any{"result": "toolgate"}},
		{"null", ".missing", map[string]any{"result": nil}},
		{"an object", "{n: .name}", map[string]any{"n": "toolgate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := command("json", "jq", "-c", "{filter}", sample)
			c.Output.Parse = "json"
			res := mustRun(t, r, packOf(c), c, map[string]any{"filter": tt.filter})
			if res.Err != "" {
				t.Fatalf("run failed: %s %s", res.Err, res.StderrTail)
			}
			if !reflect.DeepEqual(res.StructuredContent, tt.want) {
				t.Errorf("StructuredContent = %#v, want %#v", res.StructuredContent, tt.want)
			}
		})
	}
	t.Run("a number keeps its literal text", func(t *testing.T) {
		t.Parallel()
		c := command("num", "printf", "%s", "{json}")
		c.Output.Parse = "json"
		res := mustRun(t, r, packOf(c), c, map[string]any{"json": "1.50"})
		if want := map[string]any{"result": json.Number("1.50")}; !reflect.DeepEqual(res.StructuredContent, want) {
			t.Errorf("StructuredContent = %#v, want %#v", res.StructuredContent, want)
		}
	})
	t.Run("unparsed output is still an object", func(t *testing.T) {
		t.Parallel()
		c := command("raw", "jq", "-r", "{filter}", sample)
		c.Output.Parse = "json"
		res := mustRun(t, r, packOf(c), c, map[string]any{"filter": ".name"})
		if res.StructuredContent == nil || res.StructuredContent["result"] != nil ||
			!strings.Contains(res.StructuredContent["unparsed"].(string), "not valid JSON") {
			t.Errorf("StructuredContent = %#v, want {result: null, unparsed: why}", res.StructuredContent)
		}
	})
	t.Run("cut output is still an object", func(t *testing.T) {
		t.Parallel()
		c := command("big", "jq", "-n", "[range(10000)]")
		c.Output.Parse = "json"
		p := packOf(c)
		p.MaxOutput = 64
		res := mustRun(t, r, p, c, nil)
		if !res.Truncated || res.StructuredContent == nil || !strings.Contains(res.StructuredContent["unparsed"].(string), "cut at max_output") {
			t.Errorf("truncated %v, StructuredContent = %#v, want {result: null, unparsed: cut …}", res.Truncated, res.StructuredContent)
		}
	})
	t.Run("text command has none", func(t *testing.T) {
		t.Parallel()
		c := command("text", "jq", "-c", "{filter}", sample)
		res := mustRun(t, r, packOf(c), c, map[string]any{"filter": "keys"})
		if res.StructuredContent != nil {
			t.Errorf("StructuredContent = %#v for a text command", res.StructuredContent)
		}
	})
	t.Run("failed run has none", func(t *testing.T) {
		t.Parallel()
		res := mustRun(t, r, jq, commandOf(t, jq, "query"), map[string]any{"filter": "; rm -rf /", "file": sample})
		if res.StructuredContent != nil {
			t.Errorf("StructuredContent = %#v for a failed run", res.StructuredContent)
		}
	})
}
