package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/pin"
)

// toolEntry is one tool as the server lists it: the raw bytes passed to
// clients, what the policy needs from them, and the digest of its
// definition ("" when it cannot be pinned).
type toolEntry struct {
	info   grantcheck.ToolInfo
	raw    json.RawMessage
	digest pin.Digest
	// headers is the tool decoded, when its schema mirrors arguments into
	// Mcp-Param-* headers (x-mcp-header): toolgate validates a client's
	// headers against the body and writes the downstream's from it.
	headers *mcp.Tool
}

// headerTool returns the definition of tool name when it declares
// x-mcp-header parameters, nil otherwise.
func (ps *proxyServer) headerTool(name string) *mcp.Tool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if i, ok := ps.toolsIdx[name]; ok {
		return ps.tools[i].headers
	}
	return nil
}

// parseTool reads one listed tool; prev, when it has the same bytes,
// lends its digest (a listing repeated by every client costs a compare,
// not a hash).
func parseTool(raw json.RawMessage, prev *toolEntry) (toolEntry, bool) {
	e, ok := parseToolInfo(raw)
	if !ok {
		return e, false
	}
	if prev != nil && bytes.Equal(prev.raw, raw) {
		e.digest = prev.digest
		return e, true
	}
	if t, err := pin.DigestTool(raw); err == nil {
		e.digest = t.Digest
	}
	return e, true
}

func parseToolInfo(raw json.RawMessage) (toolEntry, bool) {
	info, ok := grantcheck.ParseToolInfo(raw)
	if !ok {
		return toolEntry{}, false
	}
	e := toolEntry{raw: raw, info: info}
	if bytes.Contains(info.InputSchema, []byte("x-mcp-header")) {
		var def mcp.Tool
		if json.Unmarshal(raw, &def) == nil && mcp.ValidateParamHeaderAnnotations(&def) == nil {
			e.headers = &def
		}
	}
	return e, true
}

func sameTool(a, b grantcheck.ToolInfo) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.InputSchema, b.InputSchema) &&
		(a.ReadOnlyHint == nil) == (b.ReadOnlyHint == nil) && (a.ReadOnlyHint == nil || *a.ReadOnlyHint == *b.ReadOnlyHint)
}

// ensureListed enumerates the server's tools once (a short-lived session
// of the gateway's own), so that server: grants cover something before the
// first client lists. The first attempt is waited for; a failure is
// retried in the background with backoff (mcpproxy.Lister), so no request
// waits on a server that cannot be listed.
func (g *Gateway) ensureListed(ctx context.Context, ps *proxyServer) {
	ps.mu.Lock()
	listed := ps.listed
	ps.mu.Unlock()
	if !listed {
		ps.lister.Ensure(ctx, func(ctx context.Context) error { return g.listServer(ctx, ps) })
	}
}

// listServer is one attempt of ensureListed.
func (g *Gateway) listServer(ctx context.Context, ps *proxyServer) error {
	lctx, cancel := context.WithTimeout(ctx, ps.cfg.Timeout+30*time.Second)
	defer cancel()
	cfg, _, err := g.eraConfig(lctx, ps)
	if err != nil {
		ps.mu.Lock()
		ps.listErr = err
		ps.mu.Unlock()
		g.log.Warn("could not reach an MCP server; server: grants cover nothing until it answers", "server", ps.id, "err", err)
		return err
	}
	raws, err := mcpproxy.ListTools(lctx, cfg, g.clientInfo())
	g.downstreamUp(ps.id, err)
	if err != nil {
		ps.mu.Lock()
		ps.listErr = err
		ps.mu.Unlock()
		g.log.Warn("could not list an MCP server's tools; server: grants cover nothing until it answers", "server", ps.id, "err", err)
		return err
	}
	g.setServerTools(ps, raws, true)
	return nil
}

// setServerTools records a listing (replace: the whole list; else one page
// merged into what is known) and swaps in a policy that knows the tools,
// when anything changed. It returns the entries of raws, in order (ok
// false for one that is not a tool).
func (g *Gateway) setServerTools(ps *proxyServer, raws []json.RawMessage, replace bool) []listed {
	out := make([]listed, len(raws))
	ps.mu.Lock()
	changed := false
	prev := func(name string) *toolEntry {
		if i, ok := ps.toolsIdx[name]; ok {
			return &ps.tools[i]
		}
		return nil
	}
	if replace {
		old, oldIdx := ps.tools, ps.toolsIdx
		ps.tools, ps.toolsIdx = nil, map[string]int{}
		for i, raw := range raws {
			var p *toolEntry
			if e, ok := parseToolInfo(raw); ok {
				if j, ok := oldIdx[e.info.Name]; ok {
					p = &old[j]
				}
			}
			e, ok := parseTool(raw, p)
			out[i] = listed{e, ok}
			if !ok {
				continue
			}
			if _, dup := ps.toolsIdx[e.info.Name]; !dup {
				ps.toolsIdx[e.info.Name] = len(ps.tools)
				ps.tools = append(ps.tools, e)
			}
		}
		changed = len(old) != len(ps.tools) || !ps.listed
		for i := 0; !changed && i < len(old); i++ {
			changed = !sameTool(old[i].info, ps.tools[i].info) || old[i].digest != ps.tools[i].digest
		}
	} else {
		for i, raw := range raws {
			var p *toolEntry
			if e, ok := parseToolInfo(raw); ok {
				p = prev(e.info.Name)
			}
			e, ok := parseTool(raw, p)
			out[i] = listed{e, ok}
			if !ok {
				continue
			}
			if j, ok := ps.toolsIdx[e.info.Name]; ok {
				if !sameTool(ps.tools[j].info, e.info) || ps.tools[j].digest != e.digest {
					ps.tools[j], changed = e, true
				}
				continue
			}
			ps.toolsIdx[e.info.Name] = len(ps.tools)
			ps.tools = append(ps.tools, e)
			changed = true
		}
	}
	ps.listed, ps.listErr = true, nil
	infos := make([]grantcheck.ToolInfo, len(ps.tools))
	for i, e := range ps.tools {
		infos[i] = e.info
	}
	ps.mu.Unlock()
	if !changed {
		return out
	}
	if err := g.withPolicy(func(old *grantcheck.Policy) (*grantcheck.Policy, error) { return old.WithServerTools(ps.id, infos) }); err != nil {
		g.log.Warn("MCP server listing not usable for grants", "server", ps.id, "err", err)
	}
	g.reportPins()
	return out
}

// listed is one element of a listing as setServerTools read it.
type listed struct {
	e  toolEntry
	ok bool
}

// digestOf returns the digest of the definition of ps's tool name as last
// listed; "" when it is not known (or cannot be pinned).
func (ps *proxyServer) digestOf(name string) pin.Digest {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if i, ok := ps.toolsIdx[name]; ok {
		return ps.tools[i].digest
	}
	return ""
}
