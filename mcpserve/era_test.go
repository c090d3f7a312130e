package mcpserve

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
)

func TestNegotiateLegacy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2024-11-05": "2024-11-05",
		"2026-07-28": "2025-11-25", "1999-01-01": "2025-11-25", "": "2025-11-25",
	} {
		if got := NegotiateLegacy(in); got != want {
			t.Errorf("NegotiateLegacy(%q) = %q, want %q", in, got, want)
		}
	}
	if v := SupportedVersions(); v[0] != Modern || !slices.Contains(v, "2024-11-05") {
		t.Errorf("SupportedVersions %v", v)
	}
	if !IsStateless(Modern) || IsStateless(LatestLegacy) || IsStateless("") {
		t.Error("IsStateless")
	}
	if !resumableVersion("2025-11-25") || resumableVersion("2025-06-18") || resumableVersion(Modern) || resumableVersion("") {
		t.Error("resumableVersion")
	}
}

func TestRequestMeta(t *testing.T) {
	t.Parallel()
	m, err := jsonrpc.ParseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"c"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req, v := requestMeta(m)
	if v != Modern || req.Version != Modern || string(req.ClientInfo) != `{"name":"c"}` || !req.HasExtension(ExtensionTasks) || req.HasExtension("other") {
		t.Errorf("%+v %q", req, v)
	}
	c := req.Client(&recordingPeer{})
	if c.Version != Modern || c.Peer == nil || string(c.Capabilities) != string(req.Capabilities) {
		t.Errorf("Client %+v", c)
	}
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"x"}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`} {
		m, _ := jsonrpc.ParseMessage([]byte(body))
		if _, v := requestMeta(m); v != "" {
			t.Errorf("%s: version %q", body, v)
		}
	}
}

func TestRemovedInModern(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"initialize", "ping", "notifications/initialized", "tasks/list"} {
		if !RemovedInModern(m) {
			t.Errorf("%s not removed", m)
		}
	}
	for _, m := range []string{"tools/call", "server/discover", "subscriptions/listen", "tasks/get"} {
		if RemovedInModern(m) {
			t.Errorf("%s removed", m)
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
	if string(m.ID) != "5" || m.Error.Code != -32022 || m.Error.Data.Requested != "2099-01-01" || !slices.Equal(m.Error.Data.Supported, SupportedVersions()) {
		t.Errorf("%+v", m)
	}
}

func TestSetResultMembers(t *testing.T) {
	t.Parallel()
	got := string(SetResultMembers(json.RawMessage(`{"tools":[ 1 ],"resultType":"x"}`), "resultType", `"complete"`, "cacheScope", `"private"`))
	if want := `{"tools":[ 1 ],"resultType":"complete","cacheScope":"private"}`; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	if got := string(SetResultMembers(json.RawMessage(`[1]`), "a", "1")); got != `[1]` {
		t.Errorf("non-object changed: %s", got)
	}
}
