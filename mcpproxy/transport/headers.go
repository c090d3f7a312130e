package transport

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// setStandardHeaders mirrors what a 2026-07-28 request says in its body
// into the headers the server validates against it: MCP-Protocol-Version
// (from _meta), Mcp-Method, Mcp-Name, and the Mcp-Param-* headers a
// tool's schema asks for (from the gateway's listing, cfg.ParamHeaders).
// They are computed from the bytes being sent — which are the bytes the
// gateway decided on — so headers and body cannot disagree.
func setStandardHeaders(h http.Header, msg []byte, cfg *Config) {
	m, err := jsonrpc.ParseMessage(msg)
	if err != nil || m.Method == "" {
		return
	}
	version := mcpwire.MetaVersion(m.Params)
	if version == "" {
		version = mcpwire.Modern
	}
	h.Set(mcpwire.HeaderProtocolVersion, version)
	for k, v := range mcp.StandardHeaders(version, mcp.MCPMethod(m.Method), m.Params) {
		h.Set(k, v)
	}
	if strings.HasPrefix(m.Method, "tasks/") {
		// The tasks extension routes on Mcp-Name: the task's id, as sent.
		var id string
		if json.Unmarshal(jsonrpc.Field(m.Params, "taskId"), &id) == nil && id != "" {
			if enc, ok := mcp.EncodeHeaderValue(id); ok {
				h.Set(mcpwire.HeaderName, enc)
			}
		}
	}
	if m.Method == "tools/call" && cfg.ParamHeaders != nil {
		var name string
		_ = json.Unmarshal(jsonrpc.Field(m.Params, "name"), &name)
		for k, v := range cfg.ParamHeaders(name, m.Params) {
			h.Set(k, v)
		}
	}
}
