package gateway

import (
	"encoding/json"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/strictjson"
)

// The results the gateway writes itself are encoded one way. A
// CallToolResult — a pack command's output, a job tool's answer, every
// refusal and failure — is built by callpipe.ToolResult; the JSON-RPC
// results around calls (initialize, server/discover, tools/list, tasks,
// input-required) are written here with jsonString. Both go through
// strictjson with <, > and & as they are: nothing toolgate answers passes
// encoding/json's HTML escaping, and a proxied server's results keep the
// server's bytes (a member toolgate adds is spliced in, never re-encoding
// the rest).

// jsonString is s as a JSON string, <, > and & unescaped.
func jsonString(s string) json.RawMessage { return strictjson.AppendStringNoHTML(nil, s) }

// appendJSONString appends s as a JSON string, <, > and & unescaped.
func appendJSONString(b []byte, s string) []byte { return strictjson.AppendStringNoHTML(b, s) }

// modernResult marks a result complete, as 2026-07-28 requires of every
// result (unless it already says what it is: a task, input required).
func modernResult(result json.RawMessage) json.RawMessage {
	if jsonrpc.Field(result, "resultType") != nil {
		return result
	}
	return mcpwire.SetResultMembers(result, "resultType", `"complete"`)
}
