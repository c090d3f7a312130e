package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The multi round-trip (SEP-2322) tools and prompt of the suite's
// input-required-result-* scenarios. Each is an ordinary mcp-go handler
// returning an input_required result: a 2026-07-28 client gets it as is,
// and mcp-go bridges it for an earlier client by sending the
// server-to-client requests itself and calling the handler again.

// stateSigner seals the requestState this server issues (HMAC-SHA256 with
// a key made at start), so that a state changed by anyone on the way —
// a proxy included — is refused rather than trusted.
type stateSigner struct{ key []byte }

func newStateSigner() (stateSigner, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return stateSigner{}, fmt.Errorf("requestState key: %w", err)
	}
	return stateSigner{key: key}, nil
}

// seal returns v as JSON, base64url, with its MAC after a dot.
func (s stateSigner) seal(v map[string]any) string {
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	v["nonce"] = base64.RawURLEncoding.EncodeToString(nonce)
	b, _ := json.Marshal(v)
	body := base64.RawURLEncoding.EncodeToString(b)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.mac(body))
}

// open verifies a sealed state and returns its fields.
func (s stateSigner) open(state string) (map[string]any, error) {
	body, sig, ok := strings.Cut(state, ".")
	if !ok {
		return nil, errors.New("requestState integrity check failed: not a sealed state")
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(body)) {
		return nil, errors.New("requestState integrity check failed")
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil, errors.New("requestState integrity check failed: bad encoding")
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, errors.New("requestState integrity check failed: bad payload")
	}
	return v, nil
}

func (s stateSigner) mac(body string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// clientCapabilities returns what the client declared: per request in
// 2026-07-28, at initialize before.
func clientCapabilities(ctx context.Context) mcp.ClientCapabilities {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern && info.ClientCapabilities != nil {
		return *info.ClientCapabilities
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// askString is an elicitation of one required string property.
func askString(message, property string) mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: message, RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{property: map[string]any{"type": "string"}},
		"required":   []string{property},
	}}
}

func askConfirm() mcp.ElicitationParams {
	return mcp.ElicitationParams{Message: "Please confirm", RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
		"required":   []string{"ok"},
	}}
}

func sampleText(text string, maxTokens int) mcp.CreateMessageParams {
	return mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: text}}},
		MaxTokens: maxTokens,
	}
}

// elicited returns the string field of an accepted elicitation answer.
func elicited(responses mcp.InputResponses, id, field string) (string, bool) {
	r := server.ElicitationResponse(responses, id)
	if r == nil || r.Action != mcp.ElicitationResponseActionAccept {
		return "", false
	}
	m, _ := r.Content.(map[string]any)
	s, ok := m[field].(string)
	return s, ok
}

func sampledText(responses mcp.InputResponses, id string) (string, bool) {
	r := server.SamplingResponse(responses, id)
	if r == nil {
		return "", false
	}
	if c, ok := r.Content.(mcp.TextContent); ok {
		return c.Text, true
	}
	return "no response", true
}

func noArgs(name, description string) mcp.Tool {
	return mcp.NewTool(name, mcp.WithDescription(description))
}

func registerMRTR(s *server.MCPServer, seal stateSigner) {
	s.AddTool(noArgs("test_input_required_result_elicitation", "MRTR: asks for the user's name by elicitation"),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name, ok := elicited(req.Params.InputResponses, "user_name", "name"); ok {
				return text("Hello, " + name + "!"), nil
			}
			return server.NewInputRequestBuilder("").Elicit("user_name", askString("What is your name?", "name")).ToolResult(), nil
		})
	s.AddTool(noArgs("test_input_required_result_sampling", "MRTR: asks the client's model a question"),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if answer, ok := sampledText(req.Params.InputResponses, "capital_question"); ok {
				return text("Sampling result: " + answer), nil
			}
			return server.NewInputRequestBuilder("").Sample("capital_question", sampleText("What is the capital of France?", 100)).ToolResult(), nil
		})
	s.AddTool(noArgs("test_input_required_result_list_roots", "MRTR: asks for the client's roots"),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if roots := server.RootsResponse(req.Params.InputResponses, "client_roots"); roots != nil {
				return text(fmt.Sprintf("Found %d root(s)", len(roots.Roots))), nil
			}
			return server.NewInputRequestBuilder("").Roots("client_roots").ToolResult(), nil
		})
	s.AddTool(noArgs("test_input_required_result_request_state", "MRTR: asks for a confirmation and round-trips requestState"),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if state, err := seal.open(req.Params.RequestState); err == nil && state["kind"] == "request-state" {
				if r := server.ElicitationResponse(req.Params.InputResponses, "confirm"); r != nil {
					if m, _ := r.Content.(map[string]any); m["ok"] == true {
						return text("state-ok: requestState validated"), nil
					}
				}
			}
			return server.NewInputRequestBuilder(seal.seal(map[string]any{"kind": "request-state"})).
				Elicit("confirm", askConfirm()).ToolResult(), nil
		})
	s.AddTool(noArgs("test_input_required_result_multiple_inputs", "MRTR: asks for an elicitation, a sampling and the roots at once"),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in := req.Params.InputResponses
			if state, err := seal.open(req.Params.RequestState); err == nil && state["kind"] == "multiple-inputs" {
				name, okName := elicited(in, "user_name", "name")
				greeting, okGreeting := sampledText(in, "greeting")
				roots := server.RootsResponse(in, "client_roots")
				if okName && okGreeting && roots != nil {
					return text(fmt.Sprintf("Name: %s; Greeting: %s; Roots: %d", name, greeting, len(roots.Roots))), nil
				}
			}
			return server.NewInputRequestBuilder(seal.seal(map[string]any{"kind": "multiple-inputs"})).
				Elicit("user_name", askString("What is your name?", "name")).
				Sample("greeting", sampleText("Generate a greeting", 50)).
				Roots("client_roots").ToolResult(), nil
		})
	s.AddTool(noArgs("test_input_required_result_multi_round", "MRTR: two rounds of elicitation with evolving requestState"),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in := req.Params.InputResponses
			if state, err := seal.open(req.Params.RequestState); err == nil {
				if name, ok := elicited(in, "step1", "name"); ok && state["round"] == float64(1) {
					return server.NewInputRequestBuilder(seal.seal(map[string]any{"round": 2, "name": name})).
						Elicit("step2", askString("Step 2: What is your favorite color?", "color")).ToolResult(), nil
				}
				if color, ok := elicited(in, "step2", "color"); ok && state["round"] == float64(2) {
					return text(fmt.Sprintf("Multi-round complete for %v who likes %s", state["name"], color)), nil
				}
			}
			return server.NewInputRequestBuilder(seal.seal(map[string]any{"round": 1})).
				Elicit("step1", askString("Step 1: What is your name?", "name")).ToolResult(), nil
		})
	s.AddTool(noArgs("test_input_required_result_tampered_state", "MRTR: refuses a requestState that fails its integrity check"),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState != "" {
				state, err := seal.open(req.Params.RequestState)
				if err != nil {
					return nil, err
				}
				if r := server.ElicitationResponse(req.Params.InputResponses, "confirm"); r != nil && state["kind"] == "tamper-test" {
					return text("integrity-ok: state verified"), nil
				}
			}
			return server.NewInputRequestBuilder(seal.seal(map[string]any{"kind": "tamper-test"})).
				Elicit("confirm", askConfirm()).ToolResult(), nil
		})
	s.AddTool(noArgs("test_input_required_result_capabilities", "MRTR: asks only for what the client declared it can answer"),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) > 0 {
				keys := make([]string, 0, len(req.Params.InputResponses))
				for k := range req.Params.InputResponses {
					keys = append(keys, k)
				}
				return text("capabilities-ok: received " + strings.Join(keys, ",")), nil
			}
			caps := clientCapabilities(ctx)
			b := server.NewInputRequestBuilder(seal.seal(map[string]any{"kind": "capabilities-test"}))
			asked := false
			if caps.Elicitation != nil {
				b.Elicit("elicit_input", askString("Elicitation input", "value"))
				asked = true
			}
			if caps.Sampling != nil {
				b.Sample("sample_input", sampleText("Sample request", 50))
				asked = true
			}
			if !asked {
				return text("No supported capabilities declared"), nil
			}
			return b.ToolResult(), nil
		})
	s.AddPrompt(mcp.NewPrompt("test_input_required_result_prompt", mcp.WithPromptDescription("MRTR: a prompt that asks for context by elicitation")),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if context, ok := elicited(req.Params.InputResponses, "user_context", "context"); ok {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser,
					Content: mcp.TextContent{Type: "text", Text: "Prompt with context: " + context}}}}, nil
			}
			return server.NewInputRequestBuilder("").Elicit("user_context", askString("What context should the prompt use?", "context")).PromptResult(), nil
		})
}
