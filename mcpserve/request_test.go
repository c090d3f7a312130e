package mcpserve

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

func TestRequestMeta(t *testing.T) {
	t.Parallel()
	m, err := jsonrpc.ParseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"c"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req, v := requestMeta(m)
	if v != mcpwire.Modern || req.Version != mcpwire.Modern || string(req.ClientInfo) != `{"name":"c"}` || !req.HasExtension(mcpwire.ExtensionTasks) || req.HasExtension("other") {
		t.Errorf("%+v %q", req, v)
	}
	c := req.Client(&recordingPeer{})
	if c.Version != mcpwire.Modern || c.Peer == nil || string(c.Capabilities) != string(req.Capabilities) {
		t.Errorf("Client %+v", c)
	}
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"x"}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`} {
		m, _ := jsonrpc.ParseMessage([]byte(body))
		if _, v := requestMeta(m); v != "" {
			t.Errorf("%s: version %q", body, v)
		}
	}
}

func TestUnsupportedVersion(t *testing.T) {
	t.Parallel()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				Requested string   `json:"requested"`
				Supported []string `json:"supported"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(unsupportedVersion(jsonrpc.IntID(5), "2099-01-01"), &m); err != nil {
		t.Fatal(err)
	}
	if string(m.ID) != "5" || m.Error.Code != -32022 || m.Error.Data.Requested != "2099-01-01" || !slices.Equal(m.Error.Data.Supported, mcpwire.SupportedVersions()) {
		t.Errorf("%+v", m)
	}
}
