package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// downstream is what the gateway knows of the era a proxied server speaks:
// the protocol's probe (server/discover and initialize), kept and asked
// again after a failure (mcpproxy.Eras).
type downstream struct {
	erasOnce sync.Once
	eras     *mcpproxy.Eras

	forwarders sync.Map // agent → *forwarderOnce
}

type forwarderOnce struct {
	once sync.Once
	f    *mcpproxy.Forwarder
	err  error
}

// erasOf is ps's probe cache, made on first use.
func (g *Gateway) erasOf(ps *proxyServer) *mcpproxy.Eras {
	d := &ps.down
	d.erasOnce.Do(func() {
		d.eras = mcpproxy.NewEras(ps.cfg, g.clientInfo(), func(era mcpwire.Era, err error) {
			g.downstreamUp(ps.id, err)
			if err == nil {
				g.log.Info("downstream MCP server era", "server", ps.id, "era", era.String())
			}
		})
	})
	return d.eras
}

// serverEra returns ps's era, probing it when nothing is known.
func (g *Gateway) serverEra(ctx context.Context, ps *proxyServer) (mcpwire.Era, error) {
	era, _, err := g.erasOf(ps).Get(ctx)
	return era, err
}

// serverDiscover is ps's DiscoverResult, nil when it gave none.
func (g *Gateway) serverDiscover(ctx context.Context, ps *proxyServer) json.RawMessage {
	_, discover, err := g.erasOf(ps).Get(ctx)
	if err != nil {
		return nil
	}
	return discover
}

// eraConfig is ps's config for its era: a stateless copy for a 2026-07-28
// server.
func (g *Gateway) eraConfig(ctx context.Context, ps *proxyServer) (*transport.Config, mcpwire.Era, error) {
	era, err := g.serverEra(ctx, ps)
	if err != nil {
		return nil, era, err
	}
	if era.Stateless() {
		return ps.stateless, era, nil
	}
	return ps.cfg, era, nil
}

// forwarder returns agent's stateless relay to ps: one connection shared by
// every stateless request of the agent (a legacy server gets one session
// of toolgate's own, initialized once).
func (g *Gateway) forwarder(ctx context.Context, agent string, ps *proxyServer) (*mcpproxy.Forwarder, error) {
	v, _ := ps.down.forwarders.LoadOrStore(agent, &forwarderOnce{})
	fo := v.(*forwarderOnce)
	fo.once.Do(func() {
		cfg, era, err := g.eraConfig(ctx, ps)
		if err != nil {
			fo.err = err
			return
		}
		bctx := context.WithoutCancel(ctx)
		f, err := mcpproxy.NewForwarder(bctx, cfg)
		if err != nil {
			fo.err = err
			g.downstreamUp(ps.id, err)
			return
		}
		if era == mcpwire.EraLegacy {
			if err := f.Initialize(bctx, g.clientInfo()); err != nil {
				g.erasOf(ps).Failed(mcpwire.EraLegacy)
				f.Close()
				fo.err = fmt.Errorf("server %q: %w", ps.id, err)
				g.downstreamUp(ps.id, fo.err)
				return
			}
		}
		fo.f = f
	})
	if fo.err != nil {
		// Try again next time: the server may come up.
		ps.down.forwarders.CompareAndDelete(agent, fo)
	}
	return fo.f, fo.err
}

// closeForwarders ends every stateless relay to ps.
func (ps *proxyServer) closeForwarders() {
	ps.down.forwarders.Range(func(k, v any) bool {
		if f := v.(*forwarderOnce).f; f != nil {
			f.Close()
		}
		ps.down.forwarders.Delete(k)
		return true
	})
}

// close ends every stateless relay of every proxied server.
func (p *proxy) close() {
	if p == nil {
		return
	}
	for _, ps := range p.servers {
		ps.lister.Close()
		ps.watcher.Close()
		ps.closeForwarders()
	}
}
