package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

type stringer string

func (s stringer) String() string { return string(s) }

func TestLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log := Logger(base, New(map[string]string{"s": "s3cret"}))
	log.With("server", "x s3cret").WithGroup("g").Warn("lost s3cret",
		"err", errors.New("dial s3cret"), "text", "s3cret", "who", stringer("s3cret"), "argv", []string{"a", "s3cret"},
		slog.Group("inner", "v", "s3cret"), "n", 7)
	out := buf.String()
	if strings.Contains(out, "s3cret") {
		t.Fatalf("a secret reached the log: %s", out)
	}
	for _, want := range []string{"lost [REDACTED:s]", "err=\"dial [REDACTED:s]\"", "n=7", "server=\"x [REDACTED:s]\""} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lacks %q: %s", want, out)
		}
	}
	if !log.Enabled(t.Context(), slog.LevelDebug) {
		t.Error("levels must pass through")
	}
}
