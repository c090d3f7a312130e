package chatcompletions

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// call is one tool call of a completion, reassembled from deltas.
type call struct {
	ID, Name, Arguments string
}

// post sends a completion request and returns its text, tool calls and
// finish reason, joined from the chunks when stream is true.
func post(t *testing.T, s *Server, body string) (text string, calls []call, finish string) {
	t.Helper()
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var c struct {
			Choices []struct {
				Message struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
			t.Fatal(err)
		}
		m := c.Choices[0].Message
		if m.Content != nil {
			text = *m.Content
		}
		for _, tc := range m.ToolCalls {
			calls = append(calls, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
		}
		return text, calls, c.Choices[0].FinishReason
	}
	sc := bufio.NewScanner(resp.Body)
	sawDone, sawUsage := false, false
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			sawDone = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if c.Usage != nil {
			sawUsage = true
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, call{})
				}
				if tc.ID != "" {
					calls[tc.Index].ID, calls[tc.Index].Name = tc.ID, tc.Function.Name
				}
				calls[tc.Index].Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if !sawDone || !sawUsage {
		t.Errorf("stream ended without [DONE] (%v) or usage (%v)", sawDone, sawUsage)
	}
	return text, calls, finish
}

func TestScript(t *testing.T) {
	t.Parallel()
	s := Start(Options{MainTool: "json-tools_query", FinalText: "bye", Turns: []scriptedmodel.Turn{
		{{Name: "json-tools_query", Input: map[string]any{"filter": ".a"}}},
		{{Name: "json-tools_keys"}, {Name: "notes_purge"}},
	}})
	defer s.Close()
	tools := `"tools":[{"type":"function","function":{"name":"bash"}},{"type":"function","function":{"name":"json-tools_query"}}]`

	_, calls, finish := post(t, s, `{"stream":true,`+tools+`,"messages":[{"role":"user","content":"go"}]}`)
	if finish != "tool_calls" || len(calls) != 1 || calls[0] != (call{"call_00_00", "json-tools_query", `{"filter":".a"}`}) {
		t.Fatalf("turn 0: %+v %s", calls, finish)
	}
	// A title request offers no tools and does not advance the script.
	if text, _, _ := post(t, s, `{"stream":false,"messages":[{"role":"user","content":"title?"}]}`); text != "ok" {
		t.Errorf("side request: %q", text)
	}
	history := `{"role":"user","content":"go"},
	  {"role":"assistant","content":null,"tool_calls":[{"id":"call_00_00","type":"function","function":{"name":"json-tools_query","arguments":"{}"}}]},
	  {"role":"tool","tool_call_id":"call_00_00","content":"1"}`
	_, calls, _ = post(t, s, `{"stream":true,`+tools+`,"messages":[`+history+`]}`)
	if len(calls) != 2 || calls[1].ID != "call_01_01" || calls[1].Name != "notes_purge" {
		t.Fatalf("turn 1: %+v", calls)
	}
	// A retry plays the same turn and records nothing twice.
	post(t, s, `{"stream":true,`+tools+`,"messages":[`+history+`]}`)
	history += `,{"role":"assistant","tool_calls":[{"id":"call_01_00","type":"function","function":{"name":"json-tools_keys","arguments":"{}"}},{"id":"call_01_01","type":"function","function":{"name":"notes_purge","arguments":"{}"}}]},
	  {"role":"tool","tool_call_id":"call_01_00","content":[{"type":"text","text":"[\"a\"]"}]},
	  {"role":"tool","tool_call_id":"call_01_01","content":"Model tried to call unavailable tool 'notes_purge'."}`
	text, calls, finish := post(t, s, `{"stream":true,`+tools+`,"messages":[`+history+`]}`)
	if text != "bye" || len(calls) != 0 || finish != "stop" {
		t.Fatalf("final: %q %+v %s", text, calls, finish)
	}
	want := []scriptedmodel.ToolResult{
		{ToolUseID: "call_00_00", Tool: "json-tools_query", Text: "1"},
		{ToolUseID: "call_01_00", Tool: "json-tools_keys", Text: `["a"]`},
		{ToolUseID: "call_01_01", Tool: "notes_purge", Text: "Model tried to call unavailable tool 'notes_purge'."},
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
	resp, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1/models = %d, want 404", resp.StatusCode)
	}
}
