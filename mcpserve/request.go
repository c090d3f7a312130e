package mcpserve

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/strictjson"
)

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
func (r Request) Client(peer mcpwire.Peer) mcpwire.Client {
	return mcpwire.Client{Peer: peer, Version: r.Version, Capabilities: r.Capabilities}
}

// requestMeta reads the protocol fields of a message's params._meta.
// metaVersion is "" when the message declares no modern version there.
func requestMeta(m *jsonrpc.Message) (req Request, metaVersion string) {
	meta := jsonrpc.Field(m.Params, "_meta")
	if meta == nil {
		return Request{}, ""
	}
	v := mcpwire.MetaVersion(m.Params)
	return Request{Version: v, Capabilities: jsonrpc.Field(meta, mcpwire.MetaClientCapabilities), ClientInfo: jsonrpc.Field(meta, mcpwire.MetaClientInfo)}, v
}

// unsupportedVersion is the UnsupportedProtocolVersionError (-32022) body.
func unsupportedVersion(id json.RawMessage, requested string) []byte {
	data := []byte(`{"requested":`)
	data = strictjson.AppendString(data, requested)
	data = append(data, `,"supported":`...)
	data = mcpwire.AppendVersionList(data)
	data = append(data, '}')
	errObj := jsonrpc.ErrorObject(mcp.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version: "+requested)
	f, _ := jsonrpc.ParseFields(errObj)
	return (&jsonrpc.Message{ID: id, Error: f.Set("data", data).Encode()}).Encode()
}
