package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
)

// TestFilterTools: an agent's tools/list holds only what it may call, each
// tool exactly as the server wrote it (markup in a description included)
// except an input schema narrowed by the agent's constraints.
func TestFilterTools(t *testing.T) {
	t.Parallel()
	g := openProxyGateway(t)
	ps := g.proxy.server("conf")
	echo := `{"name":"echo","description":"Echoes <text> & more","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`
	pid := `{"name":"pid","description":"pid","inputSchema":{"type":"object"}}`
	list := `{"tools":[` + echo + `,` + pid + `],"nextCursor":"c1"}`
	all := g.filterTools("tester", ps, json.RawMessage(list))
	if !bytes.Contains(all, []byte(echo)) || !bytes.Contains(all, []byte(pid)) || string(jsonrpc.Field(all, "nextCursor")) != `"c1"` {
		t.Errorf("tester's list %s, want both tools as written and the cursor", all)
	}
	narrow := g.filterTools("narrow", ps, json.RawMessage(list))
	var got struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(narrow, &got); err != nil || len(got.Tools) != 1 {
		t.Fatalf("narrow's list %s", narrow)
	}
	if !strings.Contains(string(got.Tools[0]), `"maxLength":8`) || !strings.Contains(string(got.Tools[0]), `Echoes <text> & more`) {
		t.Errorf("narrow's echo %s, want the schema narrowed and the description as written", got.Tools[0])
	}
	if bad := g.filterTools("tester", ps, json.RawMessage(`[`)); string(bad) != `{"tools":[]}` {
		t.Errorf("a result that is not an object: %s", bad)
	}
}
