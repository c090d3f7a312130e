package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
)

// Pack surfaces are served by mcp-go, which answers a call to a tool it was
// not given with a JSON-RPC "tool not found" error. DESIGN.md §5 wants
// every refusal, proxied or local, to be the same DENIED tool result, so a
// tools/call for a tool the agent is not granted is answered here, before
// mcp-go sees it, exactly as the proxy answers it.

// rpcCall is the part of a JSON-RPC request this file looks at.
type rpcCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

// refuseUngranted returns the JSON-RPC response refusing msg when it is a
// tools/call of a tool agent may not call on the pack, after auditing it.
func (g *Gateway) refuseUngranted(agent string, s *surface, msg []byte) ([]byte, bool) {
	if !bytes.Contains(msg, []byte(`"tools/call"`)) {
		return nil, false
	}
	var c rpcCall
	if json.Unmarshal(msg, &c) != nil || c.Method != "tools/call" || len(c.ID) == 0 {
		return nil, false
	}
	if ms, ok := g.mcpServer(agent, s.pack.ID); ok && ms.GetTool(c.Params.Name) != nil {
		// Shown to this agent (a granted command, or a job tool): the
		// pipeline behind it decides.
		return nil, false
	}
	d := g.Policy().Decide(agent, s.pack.ID, c.Params.Name, c.Params.Arguments)
	if d.Outcome != grantcheck.Deny || (d.Stage != grantcheck.StageGrant && d.Stage != grantcheck.StageIdentity) {
		return nil, false
	}
	ev := &audit.Event{
		Agent:      agent,
		Action:     "command:call:" + s.pack.ID + ":" + c.Params.Name,
		Decision:   string(grantcheck.Deny),
		Reason:     d.Reason,
		Payload:    audit.Payload{Provider: "command", Container: s.pack.ID, Member: c.Params.Name, Effects: string(d.Effects)},
		ArgsSHA256: audit.ArgsDigest(c.Params.Arguments),
	}
	result, rpcErr := toolResultJSON(g.refuse(ev, d.Reason))
	resp := map[string]any{"jsonrpc": "2.0", "id": c.ID}
	if rpcErr != nil {
		resp["error"] = rpcErr
	} else {
		resp["result"] = result
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return nil, false
	}
	return out, true
}

// interceptHTTP answers a POSTed tools/call of an ungranted tool; it
// reports whether it wrote the response. The body it read is put back for
// mcp-go otherwise.
func (g *Gateway) interceptHTTP(w http.ResponseWriter, r *http.Request, agent string, s *surface) bool {
	if r.Method != http.MethodPost {
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "request body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	resp, ok := g.refuseUngranted(agent, s, body)
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(resp)
	return true
}

// lockedWriter serialises whole-message writes from mcp-go and from the
// stdio interceptor onto one stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// interceptStdio copies newline-delimited messages from in to the returned
// reader, answering refused tool calls itself on out.
func (g *Gateway) interceptStdio(ctx context.Context, agent string, s *surface, in io.Reader, out *lockedWriter) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for ctx.Err() == nil {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if resp, ok := g.refuseUngranted(agent, s, line); ok {
					if _, werr := out.Write(append(resp, '\n')); werr != nil {
						pw.CloseWithError(werr)
						return
					}
				} else if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(ctx.Err())
	}()
	return pr
}

// packFor returns the pack surface when agent holds at least one tool on
// it. Pack grants do not change while the gateway runs, so the answer is
// computed once per (agent, surface) instead of on every request.
func (g *Gateway) packFor(agent, surfaceID string) (*surface, bool) {
	s, ok := g.surfaces[surfaceID]
	if !ok {
		return nil, false
	}
	key := serverKey{agent, surfaceID}
	if v, ok := g.holds.Load(key); ok {
		return s, v.(bool)
	}
	holds := len(g.Policy().Tools(agent, surfaceID)) > 0
	g.holds.Store(key, holds)
	return s, holds
}
