package mcpwire

import (
	"context"
	"testing"
)

// TestListenSignal: the session's function runs once, whether the client
// listened before or after the session asked to be told.
func TestListenSignal(t *testing.T) {
	t.Parallel()
	if ListenFrom(context.Background()) != nil {
		t.Error("a signal from a bare context")
	}
	l := &ListenSignal{}
	if ListenFrom(WithListen(context.Background(), l)) != l {
		t.Error("the signal is not the one the context carries")
	}
	runs := 0
	l.OnListen(func() { runs++ })
	if runs != 0 {
		t.Fatal("ran before the client listened")
	}
	l.Listen()
	l.Listen()
	if runs != 1 {
		t.Errorf("ran %d times, want 1", runs)
	}
	late := &ListenSignal{}
	late.Listen()
	late.OnListen(func() { runs++ })
	if runs != 2 {
		t.Error("a client that listened first: the function did not run at once")
	}
}
