package harness

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTOML(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      map[string]any
		err       string
	}{
		{name: "tables and arrays", src: "a = 1\n[mcp_servers.x]\nenabled_tools = [\"q\", 'k',\n  # comment\n  \"v\",\n]\nenabled = false\n",
			want: map[string]any{"a": "1", "mcp_servers": map[string]any{"x": map[string]any{"enabled_tools": []any{"q", "k", "v"}, "enabled": false}}}},
		{name: "quoted and dotted keys", src: "[mcp_servers.\"a.b\"]\nenv.X = \"y\"\nmcp = {t = [1, 2], s = \"\\u00e9\\n\"}\n",
			want: map[string]any{"mcp_servers": map[string]any{"a.b": map[string]any{"env": map[string]any{"X": "y"},
				"mcp": map[string]any{"t": []any{"1", "2"}, "s": "é\n"}}}}},
		{name: "multi-line strings", src: "a = \"\"\"\nx\ny\"\"\"\nb = '''\\no'''\n[[arr]]\nk = 1\n[[arr]]\nk = 2\n",
			want: map[string]any{"a": "x\ny", "b": `\no`, "arr": []any{map[string]any{"k": "1"}, map[string]any{"k": "2"}}}},
		{name: "unclosed array", src: "a = [1,\n2\n", err: "line 3"},
		{name: "junk after value", src: "a = \"x\" y\n", err: "line 1: unexpected"},
		{name: "bad escape", src: "a = \"\\q\"\n", err: "unknown escape"},
		{name: "header not closed", src: "[a\n", err: "not closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseTOML([]byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}
