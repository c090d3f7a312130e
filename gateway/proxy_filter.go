package gateway

import (
	"bytes"
	"encoding/json"

	"github.com/toolgate/toolgate/jsonrpc"
)

// filterTools rewrites one tools/list result for agent: only the tools it
// may call and whose definition is pinned (when a lock is in force), each
// exactly as the server wrote it except an input schema narrowed by the
// agent's constraints.
func (g *Gateway) filterTools(agent string, ps *proxyServer, result json.RawMessage) json.RawMessage {
	f, err := jsonrpc.ParseFields(result)
	if err != nil {
		return json.RawMessage(`{"tools":[]}`)
	}
	var raws []json.RawMessage
	_ = json.Unmarshal(f.Get("tools"), &raws)
	entries := g.setServerTools(ps, raws, false)
	rev := g.rev.Load()
	views := g.view(agent, ps.id).byName
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for i, raw := range raws {
		if !entries[i].ok {
			continue
		}
		e := entries[i].e
		v, ok := views[e.info.Name]
		if !ok {
			continue
		}
		if ok, _ := rev.pinned(ps.id, e.info.Name, e.digest); !ok {
			continue
		}
		schema := e.info.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		if v.InputSchema != nil && !bytes.Equal(v.InputSchema, schema) {
			if tf, err := jsonrpc.ParseFields(raw); err == nil {
				raw = tf.Set("inputSchema", v.InputSchema).Encode()
			}
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(raw)
		n++
	}
	b.WriteByte(']')
	return f.Set("tools", b.Bytes()).Encode()
}
