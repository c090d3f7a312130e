package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/packs/contain"
	"github.com/toolgate/toolgate/workspace"
)

// listTimeout bounds the enumeration of one server for the CLI.
const listTimeout = 30 * time.Second

// ListServerTools enumerates the tools of every MCP server ws declares,
// reached exactly as the gateway reaches them (credentials, era probe,
// paging): per server id, each tool as the server wrote it; a server
// that cannot be enumerated is in errs instead. `toolgate pin` and
// `toolgate check` use it; it opens no store and writes no audit. Servers
// are listed concurrently, each bounded by its timeout.
func ListServerTools(ctx context.Context, ws *workspace.Workspace, getenv func(string) string, log *slog.Logger) (tools map[string][]json.RawMessage, errs map[string]error) {
	tools, errs = map[string][]json.RawMessage{}, map[string]error{}
	if len(ws.MCPServers) == 0 {
		return tools, errs
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	fail := func(err error) (map[string][]json.RawMessage, map[string]error) {
		for _, s := range ws.MCPServers {
			errs[s.ID] = err
		}
		return tools, errs
	}
	creds, err := ws.ResolveCredentials(getenv)
	if err != nil {
		return fail(fmt.Errorf("credentials: %w", err))
	}
	baseDir, err := filepath.Abs(filepath.Dir(ws.Path))
	if err != nil {
		return fail(fmt.Errorf("workspace directory: %w", err))
	}
	cm := contain.New(contain.Options{Log: log})
	defer cm.Close()
	p, err := newProxy(ws, creds, getenv, baseDir, log, nil, cm)
	if err != nil {
		return fail(err)
	}
	defer p.close()
	g := &Gateway{log: log}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, ps := range p.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lctx, cancel := context.WithTimeout(ctx, ps.cfg.Timeout+listTimeout)
			defer cancel()
			raws, err := func() ([]json.RawMessage, error) {
				cfg, _, err := g.eraConfig(lctx, ps)
				if err != nil {
					return nil, err
				}
				return mcpproxy.ListTools(lctx, cfg, g.clientInfo())
			}()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[id] = err
				return
			}
			tools[id] = raws
		}()
	}
	wg.Wait()
	return tools, errs
}
