package mcpserve

import (
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/strictjson"
)

// Versions of the protocol, by era. A request that declares a modern
// version in its _meta is served statelessly (2026-07-28); anything else
// belongs to an initialize-based session.
const (
	// Modern is the stateless revision toolgate serves.
	Modern = mcp.ProtocolVersion20260728
	// LatestLegacy is the newest session-based revision.
	LatestLegacy = "2025-11-25"
)

// LegacyVersions are the session-era versions toolgate answers initialize
// with, newest first; a client asking for another gets the newest.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// SupportedVersions is every version, newest first, as server/discover and
// UnsupportedProtocolVersionError list them.
func SupportedVersions() []string { return append([]string{Modern}, LegacyVersions...) }

// NegotiateLegacy is the version an initialize asking for requested gets.
func NegotiateLegacy(requested string) string {
	if slices.Contains(LegacyVersions, requested) {
		return requested
	}
	return LegacyVersions[0]
}

// The _meta keys of a modern request (SEP-2575).
const (
	MetaProtocolVersion    = mcp.MetaKeyProtocolVersion
	MetaClientCapabilities = mcp.MetaKeyClientCapabilities
	MetaClientInfo         = mcp.MetaKeyClientInfo
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// ExtensionTasks names the tasks extension in capabilities.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// IsStateless reports whether version is a stateless protocol revision
// (2026-07-28 or later), in which a server sends no requests mid-call.
func IsStateless(version string) bool { return mcp.IsModernProtocol(version) }

// Request is what the transport read from one modern request besides its
// body: the protocol fields of _meta and, over HTTP, the request headers.
type Request struct {
	Version      string
	Capabilities json.RawMessage
	ClientInfo   json.RawMessage
	// Header reads an HTTP request header; nil on stdio.
	Header func(name string) string
}

// HasExtension reports whether the request's client declared extension id.
func (r Request) HasExtension(id string) bool {
	return jsonrpc.Field(jsonrpc.Field(r.Capabilities, "extensions"), id) != nil
}

// Client is the modern request's client as the pipeline's asker sees it.
func (r Request) Client(peer Peer) Client {
	return Client{Peer: peer, Version: r.Version, Capabilities: r.Capabilities}
}

// requestMeta reads the protocol fields of a message's params._meta. ok is
// false when the message declares no modern version there.
func requestMeta(m *jsonrpc.Message) (req Request, metaVersion string) {
	meta := jsonrpc.Field(m.Params, "_meta")
	if meta == nil {
		return Request{}, ""
	}
	var v string
	if raw := jsonrpc.Field(meta, MetaProtocolVersion); raw != nil {
		_ = json.Unmarshal(raw, &v)
	}
	return Request{Version: v, Capabilities: jsonrpc.Field(meta, MetaClientCapabilities), ClientInfo: jsonrpc.Field(meta, MetaClientInfo)}, v
}

// removedInModern are the methods 2026-07-28 removed: a modern request for
// one is answered Method not found (404 over HTTP), whatever the surface.
var removedInModern = []string{
	"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
	"tasks/result", "tasks/list", "notifications/initialized", "notifications/roots/list_changed",
}

// RemovedInModern reports whether method no longer exists in 2026-07-28.
func RemovedInModern(method string) bool { return slices.Contains(removedInModern, method) }

// unsupportedVersion is the UnsupportedProtocolVersionError (-32022) body.
func unsupportedVersion(id json.RawMessage, requested string) []byte {
	data := []byte(`{"requested":`)
	data = strictjson.AppendString(data, requested)
	data = append(data, `,"supported":[`...)
	for i, v := range SupportedVersions() {
		if i > 0 {
			data = append(data, ',')
		}
		data = strictjson.AppendString(data, v)
	}
	data = append(data, "]}"...)
	errObj := jsonrpc.ErrorObject(mcp.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: "+requested)
	f, _ := jsonrpc.ParseFields(errObj)
	return (&jsonrpc.Message{ID: id, Error: f.Set("data", data).Encode()}).Encode()
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
