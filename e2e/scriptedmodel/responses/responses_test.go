package responses

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// post sends a Responses request and returns the output items of the
// response.completed event, checking them against the items that were
// added, their argument deltas joined, and done one by one.
func post(t *testing.T, s *Server, body string) []map[string]any {
	t.Helper()
	resp, err := http.Post(s.URL+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var types []string
	args := map[float64]string{}
	text := map[float64]string{}
	done := map[float64]map[string]any{}
	var completed []map[string]any
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type        string         `json:"type"`
			OutputIndex float64        `json:"output_index"`
			Delta       string         `json:"delta"`
			Item        map[string]any `json:"item"`
			Response    struct {
				Status string           `json:"status"`
				Output []map[string]any `json:"output"`
				Usage  map[string]any   `json:"usage"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if ev.Type != event {
			t.Errorf("event line %q carries type %q", event, ev.Type)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.function_call_arguments.delta":
			args[ev.OutputIndex] += ev.Delta
		case "response.output_text.delta":
			text[ev.OutputIndex] += ev.Delta
		case "response.output_item.done":
			done[ev.OutputIndex] = ev.Item
		case "response.completed":
			if ev.Response.Status != "completed" || ev.Response.Usage == nil {
				t.Errorf("completed response: %+v", ev.Response)
			}
			completed = ev.Response.Output
		}
	}
	if len(types) < 2 || types[0] != "response.created" || types[len(types)-1] != "response.completed" {
		t.Fatalf("events = %v", types)
	}
	for i, it := range completed {
		d := done[float64(i)]
		if d == nil || d["id"] != it["id"] {
			t.Errorf("item %d: done %v, completed %v", i, d, it)
		}
		switch it["type"] {
		case "function_call":
			if args[float64(i)] != it["arguments"] {
				t.Errorf("item %d: deltas join to %q, arguments %q", i, args[float64(i)], it["arguments"])
			}
		case "message":
			if text[float64(i)] == "" {
				t.Errorf("item %d: no text deltas", i)
			}
		}
	}
	return completed
}

func TestScript(t *testing.T) {
	t.Parallel()
	s := Start(Options{MainTool: "mcp__json_tools__query", FinalText: "bye", Turns: []scriptedmodel.Turn{
		{{Name: "mcp__json_tools__query", Input: map[string]any{"filter": ".a"}}},
		{{Name: "mcp__json_tools__edit_in_place"}, {Name: "exec_command", Input: map[string]any{"cmd": "ls"}}},
	}})
	defer s.Close()
	tools := `"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__json_tools","tools":[{"type":"function","name":"query"},{"type":"function","name":"edit_in_place"}]},{"type":"web_search"}]`

	out := post(t, s, `{"model":"m",`+tools+`,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}]}`)
	if len(out) != 1 || out[0]["call_id"] != "call_00_00" || out[0]["namespace"] != "mcp__json_tools" || out[0]["name"] != "query" ||
		out[0]["arguments"] != `{"filter":".a"}` {
		t.Fatalf("turn 0: %v", out)
	}
	// A side request (no main tool) does not advance the script.
	if out := post(t, s, `{"model":"m","input":[]}`); out[0]["type"] != "message" {
		t.Errorf("side request: %v", out)
	}
	history := `{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
	  {"type":"function_call","call_id":"call_00_00","namespace":"mcp__json_tools","name":"query","arguments":"{}"},
	  {"type":"function_call_output","call_id":"call_00_00","output":"Output:\n1"}`
	out = post(t, s, `{`+tools+`,"input":[`+history+`]}`)
	if len(out) != 2 || out[0]["namespace"] != "mcp__json_tools" || out[0]["name"] != "edit_in_place" ||
		out[1]["name"] != "exec_command" || out[1]["namespace"] != nil || out[1]["call_id"] != "call_01_01" {
		t.Fatalf("turn 1: %v", out)
	}
	// A retry plays the same turn and records nothing twice.
	post(t, s, `{`+tools+`,"input":[`+history+`]}`)
	history += `,{"type":"function_call","call_id":"call_01_00","namespace":"mcp__json_tools","name":"edit_in_place","arguments":"{}"},
	  {"type":"function_call","call_id":"call_01_01","name":"exec_command","arguments":"{}"},
	  {"type":"function_call_output","call_id":"call_01_00","output":[{"type":"input_text","text":"DENIED: no"}]},
	  {"type":"function_call_output","call_id":"call_01_01","output":{"content":"refused","success":false}}`
	out = post(t, s, `{`+tools+`,"input":[`+history+`]}`)
	if len(out) != 1 || out[0]["type"] != "message" || out[0]["content"].([]any)[0].(map[string]any)["text"] != "bye" {
		t.Fatalf("final: %v", out)
	}
	want := []scriptedmodel.ToolResult{
		{ToolUseID: "call_00_00", Tool: "mcp__json_tools__query", Text: "Output:\n1"},
		{ToolUseID: "call_01_00", Tool: "mcp__json_tools__edit_in_place", Text: "DENIED: no"},
		{ToolUseID: "call_01_01", Tool: "exec_command", Text: "refused", IsError: true},
	}
	got := s.Results()
	if len(got) != len(want) {
		t.Fatalf("results = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if sets := s.ToolSets(); len(sets) != 5 || strings.Join(sets[0], ",") != "exec_command,mcp__json_tools__query,mcp__json_tools__edit_in_place,web_search" {
		t.Errorf("tool sets = %v", sets)
	}
	resp, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/models = %d, want 404", resp.StatusCode)
	}
}
