package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
)

// TestDecidingSurfaceStraddlingAReload: an executor asked to prepare a
// call decided under another revision refuses it rather than run what the
// new file declares.
func TestDecidingSurfaceStraddlingAReload(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say")
	decided := e.g.rev.Load().snap
	e.write(t, "tool:echo:say, tool:vault:stash", "TOKEN")
	if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.g.decidingSurface(ctx, "echo"); err != nil {
		t.Fatalf("outside a call: %v", err)
	}
	stale := callpipeContext(decided)
	if _, err := e.g.decidingSurface(stale, "echo"); err == nil || !strings.Contains(err.Error(), "reloaded") {
		t.Fatalf("a call decided under the old revision: %v", err)
	}
	if _, err := e.g.decidingSurface(callpipeContext(e.g.rev.Load().snap), "nope"); err == nil {
		t.Fatal("unknown pack prepared")
	}
}

// callpipeContext runs a pipeline call just far enough to get the context
// the executor sees for snap: a pipeline whose Snapshot is snap and whose
// executor captures ctx.
func callpipeContext(snap *callpipe.Snapshot) context.Context {
	var got context.Context
	p := callpipe.New(callpipe.Options{Snapshot: func() *callpipe.Snapshot { return snap }, Journal: callpipe.NewJournal(discard{})})
	call, _ := callpipe.ParseCall(json.RawMessage(`{"name":"say","arguments":{"n":"1"}}`))
	p.Call(context.Background(), callpipe.Request{Agent: "a", Provider: callpipe.Command, Surface: "echo", Call: call, Exec: captureExec{&got}})
	return got
}

type discard struct{}

func (discard) Append(*audit.Event) error { return nil }

type captureExec struct{ ctx *context.Context }

func (c captureExec) Prepare(ctx context.Context, _ *callpipe.Call) (callpipe.Run, error) {
	*c.ctx = ctx
	return nil, errRefuse
}

var errRefuse = errors.New("captured")
