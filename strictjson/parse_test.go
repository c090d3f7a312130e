package strictjson

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
	}{
		{"duplicate key", `{"a":1,"a":2}`, `duplicate key "a"`},
		{"duplicate nested", `{"x":{"b":1,"b":1}}`, `duplicate key "b" at /x`},
		{"case variant", `{"name":"read","Name":"delete"}`, `keys "name" and "Name" differ only in case`},
		{"case variant deep", `{"arguments":{"entity_type":"note","Entity_Type":"secret"}}`, `differ only in case; send one of them at /arguments`},
		{"kelvin sign folds onto k", "{\"k\":1,\"\u212a\":2}", `differ only in case`},
		{"long s folds onto s", "{\"s\":1,\"\u017f\":2}", `differ only in case`},
		{"case variant among many keys", manyKeys(40) + `,"K7":0}`, `keys "k7" and "K7" differ only in case`},
		{"duplicate among many keys", manyKeys(40) + `,"k39":0}`, `duplicate key "k39"`},
		{"invalid utf8", "{\"a\":\"\xff\"}", "not valid UTF-8"},
		{"invalid utf8 with escape", "{\"a\":\"\\n\xff\"}", "not valid UTF-8"},
		{"lone high surrogate", `{"a":"\ud800"}`, "unpaired surrogate"},
		{"lone low surrogate", `{"a":"\udc00x"}`, "unpaired surrogate"},
		{"high then non-low", `{"a":"\ud800\u0041"}`, "unpaired surrogate"},
		{"control char", "{\"a\":\"x\ny\"}", "control character"},
		{"bad escape", `{"a":"\x"}`, `invalid escape \x`},
		{"short unicode escape", `{"a":"\u12"}`, `invalid \u escape`},
		{"trailing data", `{"a":1} {"a":2}`, "unexpected data after"},
		{"trailing comma", `{"a":1,}`, "expected a string key"},
		{"leading zero", `{"a":01}`, "expected ',' or '}'"},
		{"bare dot", `{"a":1.}`, "digits must follow the decimal point"},
		{"bare exponent", `{"a":1e}`, "digits must follow the exponent"},
		{"plus sign", `{"a":+1}`, "invalid character"},
		{"NaN", `{"a":NaN}`, "invalid character"},
		{"single quotes", `{'a':1}`, "expected a string key"},
		{"unterminated", `{"a":"x`, "unexpected end"},
		{"unterminated array", `[1,2`, "unexpected end"},
		{"empty", ``, "unexpected end"},
		{"bad literal", `tru`, "invalid literal"},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"array missing comma", `[1 2]`, "expected ',' or ']'"},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "nested deeper than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(c.in))
			if err == nil {
				t.Fatalf("Parse(%q) accepted it", c.in)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse(%q) = %v, want it to say %q", c.in, err, c.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error", err)
			}
			if err := Valid([]byte(c.in)); err == nil {
				t.Fatalf("Valid(%q) accepted what Parse refused", c.in)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	return b.String()
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     any
	}{
		{"big integer keeps its text", `{"n":9007199254740993}`, map[string]any{"n": json.Number("9007199254740993")}},
		{"decimal keeps its text", `{"n":1.10}`, map[string]any{"n": json.Number("1.10")}},
		{"exponent", `[-0,1e5,2E-3]`, []any{json.Number("-0"), json.Number("1e5"), json.Number("2E-3")}},
		{"escapes", `"a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"`, "a\"\\/\b\f\n\r\t\u00e9\U0001F600"},
		{"literals", `[true,false,null]`, []any{true, false, nil}},
		{"empty containers", `{"a":{},"b":[]}`, map[string]any{"a": map[string]any{}, "b": []any{}}},
		{"whitespace", " \t\n{ \"a\" : [ 1 , 2 ] }\r\n", map[string]any{"a": []any{json.Number("1"), json.Number("2")}}},
		{"same key in different objects", `{"a":{"x":1},"b":{"x":2}}`, map[string]any{"a": map[string]any{"x": json.Number("1")}, "b": map[string]any{"x": json.Number("2")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse([]byte(c.in))
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.in, err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(c.want)
			if string(g) != string(w) {
				t.Fatalf("Parse(%q) = %s, want %s", c.in, g, w)
			}
			if err := Valid([]byte(c.in)); err != nil {
				t.Fatalf("Valid(%q): %v", c.in, err)
			}
		})
	}
}

func TestParseObject(t *testing.T) {
	t.Parallel()
	if _, err := ParseObject([]byte(`[1]`)); err == nil || !strings.Contains(err.Error(), "expected a JSON object, got an array") {
		t.Fatalf("ParseObject([1]) = %v", err)
	}
	m, err := ParseObject([]byte(`{"a":"b"}`))
	if err != nil || m["a"] != "b" {
		t.Fatalf("ParseObject = %v, %v", m, err)
	}
	if _, err := ParseObject([]byte(`{"a":`)); err == nil {
		t.Fatal("ParseObject accepted a truncated object")
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	ms, err := Members([]byte(` {"b": [1, 2] ,"a":{"x":"y"},"c":1.50} `))
	if err != nil {
		t.Fatal(err)
	}
	want := []Member{{"b", []byte("[1, 2]")}, {"a", []byte(`{"x":"y"}`)}, {"c", []byte("1.50")}}
	if len(ms) != len(want) {
		t.Fatalf("Members = %q", ms)
	}
	for i := range want {
		if ms[i].Key != want[i].Key || string(ms[i].Value) != string(want[i].Value) {
			t.Fatalf("member %d = %q %q, want %q %q", i, ms[i].Key, ms[i].Value, want[i].Key, want[i].Value)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":1,"A":2}`, `{"a":{"b":1,"b":2}}`, `{"a":1} x`, `{"a":}`} {
		if _, err := Members([]byte(bad)); err == nil {
			t.Errorf("Members(%q) accepted it", bad)
		}
	}
}

func TestKind(t *testing.T) {
	t.Parallel()
	for v, want := range map[any]string{nil: "null", true: "a boolean", json.Number("1"): "a number", "s": "a string", 3.5: "float64"} {
		if got := Kind(v); got != want {
			t.Errorf("Kind(%v) = %q, want %q", v, got, want)
		}
	}
	if Kind([]any{}) != "an array" || Kind(map[string]any{}) != "an object" {
		t.Error("Kind of containers")
	}
}

func TestFoldKey(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{{"Name", "name"}, {"ENTITY_TYPE", "entity_type"}, {"k", "\u212a"}, {"S", "\u017f"}, {"Straße", "STRASSE"}, {"Émile", "émile"}}
	for _, p := range pairs {
		eq := strings.EqualFold(p[0], p[1])
		if got := FoldKey(p[0]) == FoldKey(p[1]); got != eq {
			t.Errorf("FoldKey(%q)==FoldKey(%q) is %v, EqualFold says %v", p[0], p[1], got, eq)
		}
	}
}

func TestErrorPath(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(`{"a/b":[0,{"c~d":"\x01"}]}`))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v", err)
	}
	if e.Path != "/a~1b/1/c~0d" {
		t.Fatalf("path = %q", e.Path)
	}
	if !strings.Contains(e.Error(), "byte") {
		t.Fatalf("error text %q does not give the offset", e.Error())
	}
	_, err = Parse([]byte(`x`))
	if err == nil || strings.Contains(err.Error(), " at ") {
		t.Fatalf("root error should have no path: %v", err)
	}
}

// TestLaxMembers: the outermost keys are held to the strict rules, the
// values only to JSON syntax.
func TestLaxMembers(t *testing.T) {
	t.Parallel()
	ok := []struct{ in, key, value string }{
		{`{"m":"x","p":{"a":1,"A":2}}`, "p", `{"a":1,"A":2}`},
		{`{"m":"x","p":{"a":{"b":1,"b":2}}}`, "p", `{"a":{"b":1,"b":2}}`},
		{`{"p":["\ud800"],"m":"x"}`, "p", `["\ud800"]`},
		{"{\"p\":\"\xff\",\"m\":1}", "p", "\"\xff\""},
	}
	for _, c := range ok {
		ms, err := LaxMembers([]byte(c.in))
		if err != nil {
			t.Errorf("LaxMembers(%q): %v", c.in, err)
			continue
		}
		found := false
		for _, m := range ms {
			if m.Key == c.key {
				found = string(m.Value) == c.value
			}
		}
		if !found {
			t.Errorf("LaxMembers(%q) = %q, want %s = %s", c.in, ms, c.key, c.value)
		}
		if _, err := Members([]byte(c.in)); err == nil {
			t.Errorf("Members(%q) accepted what only LaxMembers should", c.in)
		}
	}
	refused := []struct{ in, want string }{
		{`{"m":1,"M":2}`, "differ only in case"},
		{`{"m":1,"m":2}`, "duplicate key"},
		{"{\"\xff\":1}", "not valid UTF-8"},
		{`{"\ud800":1}`, "unpaired surrogate"},
		{`{"p":{"a":1,}}`, "expected a string key"},
		{`{"p":"x` + "\n" + `"}`, "control character"},
		{`{"p":[1,2}`, "expected ',' or ']'"},
		{`{"p":1} x`, "unexpected data after"},
		{`[1]`, "expected a JSON object"},
	}
	for _, c := range refused {
		if _, err := LaxMembers([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LaxMembers(%q) = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestScanMembers(t *testing.T) {
	t.Parallel()
	ms, err := ScanMembers([]byte(`{"a":1,"A":2,"a":{"x":1,"x":2}}`))
	if err != nil || len(ms) != 3 || ms[1].Key != "A" || string(ms[2].Value) != `{"x":1,"x":2}` {
		t.Fatalf("ScanMembers = %q, %v", ms, err)
	}
	if _, err := ScanMembers([]byte(`{"a":1,}`)); err == nil {
		t.Error("ScanMembers accepted a syntax error")
	}
}
