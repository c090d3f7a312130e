package packs

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

func TestBuildArgv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		argv      []string
		spread    []string
		allowDash []string
		args      map[string]any
		want      []string
	}{
		{"whole element", []string{"jq", "{filter}", "{file}"}, nil, nil,
			map[string]any{"filter": ".a | .b", "file": "x y.json"}, []string{"jq", ".a | .b", "x y.json"}},
		{"inside a literal", []string{"gh", "--repo={repo}", "pr/{n}.txt"}, nil, nil,
			map[string]any{"repo": "o/r", "n": float64(3)}, []string{"gh", "--repo=o/r", "pr/3.txt"}},
		{"jq object braces stay literal", []string{"jq", "{a: .b}"}, nil, nil,
			nil, []string{"jq", "{a: .b}"}},
		{"integral float without decimals", []string{"p", "{n}"}, nil, nil,
			map[string]any{"n": 3.0}, []string{"p", "3"}},
		{"fraction", []string{"p", "{n}"}, nil, nil,
			map[string]any{"n": 2.5}, []string{"p", "2.5"}},
		{"large float not in exponent form", []string{"p", "{n}"}, nil, nil,
			map[string]any{"n": 1e21}, []string{"p", "1000000000000000000000"}},
		{"go ints", []string{"p", "{a}", "{b}"}, nil, nil,
			map[string]any{"a": 7, "b": uint8(8)}, []string{"p", "7", "8"}},
		{"json.Number canonical", []string{"p", "{a}", "{b}"}, nil, nil,
			map[string]any{"a": json.Number("3.0"), "b": json.Number("12345678901234567890")}, []string{"p", "3", "12345678901234567890"}},
		{"booleans", []string{"p", "--x={b}", "{c}"}, nil, nil,
			map[string]any{"b": true, "c": false}, []string{"p", "--x=true", "false"}},
		{"empty string is one empty element", []string{"p", "{s}"}, nil, nil,
			map[string]any{"s": ""}, []string{"p", ""}},
		{"absent whole element dropped", []string{"p", "{opt}", "end"}, nil, nil,
			map[string]any{}, []string{"p", "end"}},
		{"null whole element dropped", []string{"p", "{opt}"}, nil, nil,
			map[string]any{"opt": nil}, []string{"p"}},
		{"absent inside literal drops the element", []string{"gh", "--limit={n}", "list"}, nil, nil,
			map[string]any{}, []string{"gh", "list"}},
		{"spread items one element each", []string{"git", "add", "--", "{paths}"}, []string{"paths"}, nil,
			map[string]any{"paths": []any{"a b", "c;d", float64(1)}}, []string{"git", "add", "--", "a b", "c;d", "1"}},
		{"spread typed slice", []string{"p", "{xs}"}, []string{"xs"}, nil,
			map[string]any{"xs": []string{"a", "b"}}, []string{"p", "a", "b"}},
		{"empty spread adds nothing", []string{"p", "{xs}", "z"}, []string{"xs"}, nil,
			map[string]any{"xs": []any{}}, []string{"p", "z"}},
		{"dash allowed after --", []string{"rm", "--", "{path}"}, nil, nil,
			map[string]any{"path": "-rf"}, []string{"rm", "--", "-rf"}},
		{"dash allowed by allow_dash", []string{"p", "{n}"}, nil, []string{"n"},
			map[string]any{"n": -1.5}, []string{"p", "-1.5"}},
		{"dash inside a literal cannot start an element", []string{"p", "--x={v}"}, nil, nil,
			map[string]any{"v": "--evil"}, []string{"p", "--x=--evil"}},
		{"dash after a leading literal", []string{"p", "a{v}"}, nil, nil,
			map[string]any{"v": "-b"}, []string{"p", "a-b"}},
		{"spread dash after --", []string{"p", "--", "{xs}"}, []string{"xs"}, nil,
			map[string]any{"xs": []any{"-a", "--b"}}, []string{"p", "--", "-a", "--b"}},
		{"shell text is one element", []string{"jq", "{filter}"}, nil, nil,
			map[string]any{"filter": "; rm -rf / $(id) `id` | cat\n'\""}, []string{"jq", "; rm -rf / $(id) `id` | cat\n'\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := &workspace.Command{ID: "c", Argv: tt.argv, Spread: tt.spread, AllowDash: tt.allowDash}
			got, err := BuildArgv(cmd, tt.args)
			if err != nil {
				t.Fatalf("BuildArgv: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("BuildArgv = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBuildArgvRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		argv      []string
		spread    []string
		allowDash []string
		args      map[string]any
		param     string
		msg       string
	}{
		{"leading double dash", []string{"git", "log", "{rev}"}, nil, nil,
			map[string]any{"rev": "--output=/etc/passwd"}, "rev", `starts with "-"`},
		{"leading single dash", []string{"jq", "{filter}", "{file}"}, nil, nil,
			map[string]any{"filter": ".", "file": "-f"}, "file", "argument injection"},
		{"negative number", []string{"p", "{n}"}, nil, nil,
			map[string]any{"n": -1.0}, "n", `starts with "-"`},
		{"dash ahead of a literal", []string{"p", "{v}.json"}, nil, nil,
			map[string]any{"v": "-x"}, "v", `starts with "-"`},
		{"empty value does not hide a dash", []string{"p", "{a}{b}"}, nil, nil,
			map[string]any{"a": "", "b": "--x"}, "b", `starts with "-"`},
		{"allow_dash is per parameter", []string{"p", "{a}", "{b}"}, nil, []string{"a"},
			map[string]any{"a": "-ok", "b": "-no"}, "b", `starts with "-"`},
		{"-- as a value does not open the gate", []string{"p", "{a}", "{b}"}, nil, []string{"a"},
			map[string]any{"a": "--", "b": "-no"}, "b", `starts with "-"`},
		{"spread item with dash", []string{"p", "{xs}"}, []string{"xs"}, nil,
			map[string]any{"xs": []any{"ok", "-bad"}}, "xs", `item 1 ("-bad") starts with "-"`},
		{"array without spread", []string{"p", "{xs}"}, nil, nil,
			map[string]any{"xs": []any{"a"}}, "xs", "is a list"},
		{"array inside a literal", []string{"p", "--x={xs}"}, []string{"xs"}, nil,
			map[string]any{"xs": []any{"a"}}, "xs", "is a list"},
		{"object", []string{"p", "{o}"}, nil, nil,
			map[string]any{"o": map[string]any{"a": 1.0}}, "o", "is an object"},
		{"object inside a literal", []string{"p", "x{o}"}, nil, nil,
			map[string]any{"o": map[string]any{}}, "o", "is an object"},
		{"object in spread", []string{"p", "{xs}"}, []string{"xs"}, nil,
			map[string]any{"xs": []any{map[string]any{}}}, "xs", "item 0: is an object"},
		{"nested list in spread", []string{"p", "{xs}"}, []string{"xs"}, nil,
			map[string]any{"xs": []any{[]any{"a"}}}, "xs", "item 0: is a nested list"},
		{"NUL byte", []string{"p", "{s}"}, nil, nil,
			map[string]any{"s": "a\x00b"}, "s", "NUL byte"},
		{"credential placeholder", []string{"p", "{credential.tok}"}, nil, nil,
			nil, "credential.tok", "pass it through the pack's env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := &workspace.Command{ID: "c", Argv: tt.argv, Spread: tt.spread, AllowDash: tt.allowDash}
			got, err := BuildArgv(cmd, tt.args)
			if err == nil {
				t.Fatalf("BuildArgv = %q, want an error about %q", got, tt.param)
			}
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Param != tt.param {
				t.Fatalf("error %v: want an *ArgError for parameter %q", err, tt.param)
			}
			if !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), `parameter "`+tt.param+`"`) {
				t.Errorf("error %q should name the parameter and contain %q", err, tt.msg)
			}
		})
	}
}
