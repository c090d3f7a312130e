package callpipe

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestResultBuilders(t *testing.T) {
	t.Parallel()
	for _, b := range [][]byte{ErrorResult("DENIED: \"quoted\"\n"), TextResult("ok \u2028")} {
		if !json.Valid(b) {
			t.Errorf("invalid JSON %s", b)
		}
	}
	if string(ErrorResult("x")) != `{"content":[{"type":"text","text":"x"}],"isError":true}` || string(TextResult("y")) != `{"content":[{"type":"text","text":"y"}]}` {
		t.Error("result shapes")
	}
}

// TestToolResultIsWhatMCPGoWrites: the builder writes the document mcp-go's
// CallToolResult marshals to (the protocol's shape, the same members in the
// same order), except that <, > and & are not escaped.
func TestToolResultIsWhatMCPGoWrites(t *testing.T) {
	t.Parallel()
	structured := map[string]any{"result": []any{json.Number("1.50"), "<b>&amp;</b>", nil, true}, "n": int64(7), "f": 0.5, "i": 3}
	cases := []struct {
		name string
		r    ToolResult
		m    *mcp.CallToolResult
	}{
		{"text", ToolResult{Text: "a <b> & c\n"}, mcp.NewToolResultText("a <b> & c\n")},
		{"error", ToolResult{Text: "DENIED: <x>", IsError: true}, mcp.NewToolResultError("DENIED: <x>")},
		{"structured", ToolResult{Text: "t", Structured: structured}, func() *mcp.CallToolResult {
			r := mcp.NewToolResultText("t")
			r.StructuredContent = structured
			return r
		}()},
		{"structured error", ToolResult{Text: "t", IsError: true, Structured: map[string]any{}}, func() *mcp.CallToolResult {
			r := mcp.NewToolResultError("t")
			r.StructuredContent = map[string]any{}
			return r
		}()},
	}
	for _, c := range cases {
		got := c.r.JSON()
		want, err := json.Marshal(c.m)
		if err != nil {
			t.Fatal(err)
		}
		unescaped := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(want))
		if string(got) != unescaped {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, unescaped)
		}
		if strings.Contains(string(got), `\u00`) {
			t.Errorf("%s: HTML escaped: %s", c.name, got)
		}
	}
}

func TestToolResultRefusesWhatIsNotJSON(t *testing.T) {
	t.Parallel()
	for _, v := range []any{math.NaN(), struct{}{}, []string{"typed"}} {
		got := ToolResult{Text: "t", Structured: map[string]any{"v": v}}.JSON()
		if !json.Valid(got) || !strings.Contains(string(got), `"isError":true`) || !strings.Contains(string(got), "not JSON") {
			t.Errorf("Structured %#v: %s, want an error result", v, got)
		}
	}
}

// TestScalarTextGetsAnObjectStructuredContent: a text that is one JSON
// value other than an object (what Gemini CLI would JSON.parse into a
// non-object structuredContent and then reject) carries {"result": value};
// an object, text that is not JSON, and a result that has structuredContent
// already are left alone. The text is never changed.
func TestScalarTextGetsAnObjectStructuredContent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want string // the structuredContent member, "" for none
	}{
		{"\"api\"\n", `{"result":"api"}`},
		{"42", `{"result":42}`},
		{"1e400\n", `{"result":1e400}`},
		{"-0.50", `{"result":-0.50}`},
		{" true ", `{"result":true}`},
		{"false", `{"result":false}`},
		{"null\n", `{"result":null}`},
		{"[1,\"<a>\",{\"k\":1,\"k\":2}]\n", `{"result":[1,"<a>",{"k":2}]}`},
		{"\"\\ud800\"", "{\"result\":\"\ufffd\"}"},
		{`{"name":"toolgate"}`, ""},
		{"\"api\"\n\"web\"\n", ""}, // two values: JSON.parse fails too
		{"1 file changed", ""},
		{"null-terminated", ""},
		{"[INFO] done", ""},
		{"", ""},
		{"   \n", ""},
		{"notes.txt\n", ""},
		{"DENIED: approval pending", ""},
		{"nullable", ""},
		{"true story\n", ""},
		{"\xff\xfe", ""},
		{"\"\xff\"", "{\"result\":\"\ufffd\"}"},
		{strings.Repeat("[", 20000) + strings.Repeat("]", 20000), ""}, // deeper than the decoder goes: left alone
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), "{\"result\":" + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}"},
	}
	for _, c := range cases {
		got := ToolResult{Text: c.text}.JSON()
		var doc struct {
			Content           []struct{ Text string }
			StructuredContent json.RawMessage
		}
		if err := json.Unmarshal(got, &doc); err != nil {
			t.Fatalf("%q: %v in %s", c.text, err, got)
		}
		if len(doc.Content) != 1 || (utf8.ValidString(c.text) && doc.Content[0].Text != c.text) {
			t.Errorf("%q: the text changed: %s", c.text, got)
		}
		if string(doc.StructuredContent) != c.want {
			t.Errorf("%q: structuredContent %s, want %q", c.text, doc.StructuredContent, c.want)
		}
	}
	own := ToolResult{Text: "7", Structured: map[string]any{"a": 1}}.JSON()
	if !strings.HasSuffix(string(own), `"structuredContent":{"a":1}}`) {
		t.Errorf("a result's own structuredContent was replaced: %s", own)
	}
	if e := ErrorResult("[1]"); !strings.Contains(string(e), `"isError":true,"structuredContent":{"result":[1]}`) {
		t.Errorf("error result %s", e)
	}
}

// TestScalarCheckCostsNothingForText: text that is not a JSON scalar (a
// listing, a sentence, words starting like true/false/null) is told apart
// without allocating, so ordinary results pay nothing for the check.
func TestScalarCheckCostsNothingForText(t *testing.T) {
	for _, text := range []string{"notes.txt\nkeep.txt\n", "null-terminated", "{\"name\":\"toolgate\"}", "DENIED: readonly tier: write refused"} {
		if n := testing.AllocsPerRun(100, func() { _ = scalarStructured(text) }); n != 0 {
			t.Errorf("%q: %v allocations", text, n)
		}
	}
}
