package transport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c := &Config{ID: "x"}
	if c.RequestTimeout("any") != DefaultTimeout || c.MessageLimit() != DefaultMaxMessage || c.Log() == nil {
		t.Error("defaults")
	}
	c = &Config{ID: "x", Timeout: time.Second, TimeoutFor: map[string]time.Duration{"slow": time.Minute, "zero": 0}, MaxMessage: 10}
	if c.RequestTimeout("slow") != time.Minute || c.RequestTimeout("zero") != time.Second || c.RequestTimeout("") != time.Second || c.MessageLimit() != 10 {
		t.Error("declared bounds")
	}
	s := c.Stateless()
	if !s.IsStateless() || c.IsStateless() || s.ID != "x" {
		t.Error("Stateless copies")
	}
}

func TestDialRefuses(t *testing.T) {
	t.Parallel()
	if _, err := Dial(context.Background(), &Config{ID: "none"}); err == nil || !strings.Contains(err.Error(), `server "none" has neither command nor url`) {
		t.Errorf("%v", err)
	}
	if _, err := Dial(context.Background(), &Config{ID: "gone", Command: []string{"/nonexistent/server"}}); err == nil || !strings.Contains(err.Error(), `start server "gone"`) {
		t.Errorf("%v", err)
	}
	if !errors.Is(ErrClosed, ErrClosed) || ErrClosed.Error() != "connection closed" {
		t.Error("ErrClosed")
	}
}
