package mcpwire

import "github.com/mark3labs/mcp-go/mcp"

// HTTP headers of the streamable HTTP transport, as both sides send and
// read them.
const (
	HeaderProtocolVersion = mcp.HeaderProtocolVersion
	HeaderSessionID       = mcp.HeaderSessionID
	HeaderLastEventID     = mcp.HeaderLastEventID
	HeaderMethod          = mcp.HeaderMethod
	HeaderName            = mcp.HeaderName
)
