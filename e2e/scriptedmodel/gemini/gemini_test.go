package gemini

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// post sends a generateContent request (streamed with alt=sse when stream
// is true) and returns the candidate's parts, joined across chunks, and its
// finish reason.
func post(t *testing.T, s *Server, stream bool, body string) (parts []map[string]any, finish string) {
	t.Helper()
	url := s.URL + "/v1beta/models/gemini-2.5-pro:generateContent"
	if stream {
		url = s.URL + "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	type chunk struct {
		Candidates []struct {
			Content struct {
				Role  string           `json:"role"`
				Parts []map[string]any `json:"parts"`
			} `json:"content"`
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		UsageMetadata map[string]any `json:"usageMetadata"`
	}
	var chunks []chunk
	if stream {
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(strings.TrimRight(sc.Text(), "\r"), "data: ")
			if !ok {
				continue
			}
			var c chunk
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatalf("chunk %s: %v", data, err)
			}
			chunks = append(chunks, c)
		}
	} else {
		var c chunk
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	for i, c := range chunks {
		if len(c.Candidates) != 1 || c.Candidates[0].Content.Role != "model" {
			t.Fatalf("chunk %d: %+v", i, c)
		}
		parts = append(parts, c.Candidates[0].Content.Parts...)
		if f := c.Candidates[0].FinishReason; f != "" {
			if i != len(chunks)-1 || c.UsageMetadata == nil {
				t.Errorf("finish reason on chunk %d of %d, usage %v", i, len(chunks), c.UsageMetadata)
			}
			finish = f
		}
	}
	return parts, finish
}

func TestScript(t *testing.T) {
	t.Parallel()
	s := Start(Options{MainTool: "mcp_json-tools_query", FinalText: "bye", Turns: []scriptedmodel.Turn{
		{{Name: "mcp_json-tools_query", Input: map[string]any{"filter": ".a"}}},
		{{Name: "mcp_json-tools_keys"}, {Name: "mcp_notes_purge"}},
	}})
	defer s.Close()
	tools := `"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"mcp_json-tools_query"},{"name":"mcp_json-tools_keys"}]}]`

	parts, finish := post(t, s, true, `{`+tools+`,"contents":[{"role":"user","parts":[{"text":"go"}]}]}`)
	fc, _ := parts[0]["functionCall"].(map[string]any)
	if len(parts) != 1 || finish != "STOP" || fc["id"] != "call_00_00" || fc["name"] != "mcp_json-tools_query" || fc["args"].(map[string]any)["filter"] != ".a" {
		t.Fatalf("turn 0: %v %s", parts, finish)
	}
	// The CLI's own checks offer no tools and do not advance the script.
	if parts, _ := post(t, s, false, `{"contents":[{"role":"user","parts":[{"text":"next speaker?"}]}]}`); parts[0]["text"] != "ok" {
		t.Errorf("side request: %v", parts)
	}
	history := `{"role":"user","parts":[{"text":"go"}]},
	  {"role":"model","parts":[{"functionCall":{"id":"call_00_00","name":"mcp_json-tools_query","args":{}}}]},
	  {"role":"user","parts":[{"functionResponse":{"id":"call_00_00","name":"mcp_json-tools_query","response":{"output":"1"}}}]}`
	parts, _ = post(t, s, true, `{`+tools+`,"contents":[`+history+`]}`)
	if len(parts) != 2 || parts[1]["functionCall"].(map[string]any)["id"] != "call_01_01" {
		t.Fatalf("turn 1: %v", parts)
	}
	// A retry plays the same turn and records nothing twice.
	post(t, s, true, `{`+tools+`,"contents":[`+history+`]}`)
	history += `,{"role":"model","parts":[{"functionCall":{"id":"call_01_00","name":"mcp_json-tools_keys","args":{}}},{"functionCall":{"id":"call_01_01","name":"mcp_notes_purge","args":{}}}]},
	  {"role":"user","parts":[{"functionResponse":{"id":"call_01_00","name":"mcp_json-tools_keys","response":{"output":["a"]}}},
	    {"functionResponse":{"id":"call_01_01","name":"mcp_notes_purge","response":{"error":"Tool \"mcp_notes_purge\" not found"}}}]}`
	parts, _ = post(t, s, false, `{`+tools+`,"contents":[`+history+`]}`)
	if len(parts) != 1 || parts[0]["text"] != "bye" {
		t.Fatalf("final: %v", parts)
	}
	want := []scriptedmodel.ToolResult{
		{ToolUseID: "call_00_00", Tool: "mcp_json-tools_query", Text: "1"},
		{ToolUseID: "call_01_00", Tool: "mcp_json-tools_keys", Text: `["a"]`},
		{ToolUseID: "call_01_01", Tool: "mcp_notes_purge", Text: `Tool "mcp_notes_purge" not found`, IsError: true},
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
	for _, path := range []string{"/v1beta/models/gemini-2.5-pro:countTokens"} {
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("POST %s = %d", path, resp.StatusCode)
		}
	}
	resp, err := http.Get(s.URL + "/v1beta/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /v1beta/models = %d, want 404", resp.StatusCode)
	}
}
