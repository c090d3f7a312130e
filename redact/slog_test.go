package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/strictjson"
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

// TestLoggerKeysOnce: a key given by With and again by the call is written
// once when the values agree, renamed when they do not, at each level; every
// line stays strict JSON whatever the strings hold.
func TestLoggerKeysOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&buf, nil))
	log := Logger(base, New(map[string]string{"s": "s3cret"})).With("server", "x", "server", "x")
	log.Info("one", "server", "x", "err", "a\"b\\\x1b\xff\u202e")
	log.Info("two", "server", "y", "server", "z", "server_2", "w")
	log.WithGroup("g").Info("three", "server", "x")
	log.WithGroup("").Info("four", "server", "x")
	want := []string{
		`"msg":"one","server":"x","err":"a\"b\\\u001b\ufffd` + "\u202e" + `"}`,
		`"msg":"two","server":"x","server_2":"y","server_3":"z","server_2_2":"w"}`,
		`"msg":"three","server":"x","g":{"server":"x"}}`,
		`"msg":"four","server":"x"}`,
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	for i, l := range lines {
		if !strings.HasSuffix(l, want[i]) {
			t.Errorf("line %d = %s\nwant it to end %s", i+1, l, want[i])
		}
		if err := strictjson.Valid([]byte(l)); err != nil {
			t.Errorf("line %d is not strict JSON: %v: %s", i+1, err, l)
		}
	}
}
