package mcpwire

import (
	"context"
	"testing"
	"time"
)

type countingHints struct{ streamed, paused int }

func (h *countingHints) Streamed()            { h.streamed++ }
func (h *countingHints) Paused(time.Duration) { h.paused++ }

func TestStreamHintsContext(t *testing.T) {
	t.Parallel()
	if StreamHintsFrom(context.Background()) != nil {
		t.Error("hints from a bare context")
	}
	h := &countingHints{}
	ctx, cancel := context.WithCancel(WithStreamHints(context.Background(), h))
	defer cancel()
	StreamHintsFrom(ctx).Streamed()
	StreamHintsFrom(ctx).Paused(time.Second)
	if h.streamed != 1 || h.paused != 1 {
		t.Errorf("%+v", h)
	}
}
