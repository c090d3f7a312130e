package mcpwire

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
)

// The _meta keys of a modern request and its notifications (SEP-2575).
const (
	MetaProtocolVersion    = mcp.MetaKeyProtocolVersion
	MetaClientCapabilities = mcp.MetaKeyClientCapabilities
	MetaClientInfo         = mcp.MetaKeyClientInfo
	MetaServerInfo         = mcp.MetaKeyServerInfo
	MetaLogLevel           = mcp.MetaKeyLogLevel
	// MetaSubscriptionID tags the notifications of a subscriptions/listen
	// stream with the id of the request that opened it.
	MetaSubscriptionID = mcp.MetaKeySubscriptionID
)

// ExtensionTasks names the tasks extension in capabilities.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// The asynchronous tool-approval extension (SEP-2848): a client that
// declares it is told, in a result's _meta, why a call is held or refused
// (the SEP-2643 authorization envelope) and what became of an approved
// call (its disposition).
const (
	// ExtensionToolApproval names the extension in capabilities.
	ExtensionToolApproval = "io.modelcontextprotocol/tool-approval"
	// MetaAuthorization is the _meta key of the denial envelope.
	MetaAuthorization = "io.modelcontextprotocol/authorization"
	// MetaApprovalDisposition is the _meta key of a completed approval
	// task's execution outcome.
	MetaApprovalDisposition = "io.modelcontextprotocol/tool-approval-disposition"
	// MetaModelImmediateResponse is the _meta key of the text a model is
	// given at once while its call waits.
	MetaModelImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
)

// MetaVersion reads the protocol version a request's params._meta
// declares; "" when it declares none (or not as a string).
func MetaVersion(params json.RawMessage) string {
	var v string
	if raw := jsonrpc.Field(jsonrpc.Field(params, "_meta"), MetaProtocolVersion); raw != nil {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// SetResultMembers returns result (a JSON object) with the members given
// set — a modern result's resultType, a list's cacheScope — leaving every
// other member's bytes as they were.
func SetResultMembers(result json.RawMessage, kv ...string) json.RawMessage {
	f, err := jsonrpc.ParseFields(result)
	if err != nil {
		return result
	}
	for i := 0; i+1 < len(kv); i += 2 {
		f = f.Set(kv[i], json.RawMessage(kv[i+1]))
	}
	return f.Encode()
}
