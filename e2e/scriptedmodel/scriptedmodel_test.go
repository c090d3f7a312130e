package scriptedmodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// post sends a Messages request and returns the assistant content blocks
// and stop reason, reassembled from the event stream when stream is true.
func post(t *testing.T, s *Server, body string) (blocks []map[string]any, stop string) {
	t.Helper()
	resp, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var msg struct {
			Content    []map[string]any `json:"content"`
			StopReason string           `json:"stop_reason"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
			t.Fatal(err)
		}
		return msg.Content, msg.StopReason
	}
	var events []string
	partial := map[int]string{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock map[string]any `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
				Text        string `json:"text"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		events = append(events, ev.Type)
		switch ev.Type {
		case "content_block_start":
			blocks = append(blocks, ev.ContentBlock)
		case "content_block_delta":
			if ev.Delta.Type == "input_json_delta" {
				partial[ev.Index] += ev.Delta.PartialJSON
			} else {
				blocks[ev.Index]["text"] = blocks[ev.Index]["text"].(string) + ev.Delta.Text
			}
		case "message_delta":
			stop = ev.Delta.StopReason
		}
	}
	for i, p := range partial {
		var input map[string]any
		if err := json.Unmarshal([]byte(p), &input); err != nil {
			t.Fatalf("joined input_json_delta %q: %v", p, err)
		}
		blocks[i]["input"] = input
	}
	if events[0] != "message_start" || events[len(events)-1] != "message_stop" {
		t.Errorf("events = %v", events)
	}
	return blocks, stop
}

func TestScript(t *testing.T) {
	t.Parallel()
	s := Start(Options{MainTool: "q", FinalText: "bye", Turns: []Turn{
		{{Name: "q", Input: map[string]any{"filter": ".a"}}},
		{{Name: "w"}, {Name: "q"}},
	}})
	defer s.Close()
	tools := `"tools":[{"name":"q"},{"name":"w"}]`

	blocks, stop := post(t, s, `{"stream":true,`+tools+`,"messages":[{"role":"user","content":"go"}]}`)
	if stop != "tool_use" || len(blocks) != 1 || blocks[0]["id"] != "toolu_00_00" || blocks[0]["input"].(map[string]any)["filter"] != ".a" {
		t.Fatalf("turn 0: %v %s", blocks, stop)
	}
	// A side request (no main tool) does not advance the script.
	if blocks, _ := post(t, s, `{"stream":false,"messages":[{"role":"user","content":"title?"}]}`); blocks[0]["text"] != "ok" {
		t.Errorf("side request: %v", blocks)
	}
	history := `{"role":"user","content":"go"},
	  {"role":"assistant","content":[{"type":"tool_use","id":"toolu_00_00","name":"q","input":{}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_00_00","content":[{"type":"text","text":"1"}]}]}`
	blocks, stop = post(t, s, `{"stream":true,`+tools+`,"messages":[`+history+`]}`)
	if stop != "tool_use" || len(blocks) != 2 || blocks[0]["name"] != "w" || blocks[1]["id"] != "toolu_01_01" {
		t.Fatalf("turn 1: %v %s", blocks, stop)
	}
	// A retry of the same request plays the same turn and records nothing twice.
	post(t, s, `{"stream":true,`+tools+`,"messages":[`+history+`]}`)
	history += `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01_00","name":"w","input":{}},{"type":"tool_use","id":"toolu_01_01","name":"q","input":{}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01_00","content":"no","is_error":true},{"type":"tool_result","tool_use_id":"toolu_01_01","content":"2"}]}`
	blocks, stop = post(t, s, `{"stream":false,`+tools+`,"messages":[`+history+`]}`)
	if stop != "end_turn" || blocks[0]["text"] != "bye" {
		t.Fatalf("final: %v %s", blocks, stop)
	}
	want := []ToolResult{{"toolu_00_00", "q", "1", false}, {"toolu_01_00", "w", "no", true}, {"toolu_01_01", "q", "2", false}}
	got := s.Results()
	if len(got) != len(want) {
		t.Fatalf("results = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/models = %d, want 404", resp.StatusCode)
	}
}
