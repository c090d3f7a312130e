package callpipe

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

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
