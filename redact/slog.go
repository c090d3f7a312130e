package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Logger returns l with every record redacted by r: messages, string and
// error attributes, at any depth, so a secret a downstream server or a
// command echoed into an error never reaches a log line.
func Logger(l *slog.Logger, r *Redactor) *slog.Logger {
	return slog.New(NewHandler(l.Handler(), r))
}

// NewHandler wraps inner so that every record it handles is redacted by r.
func NewHandler(inner slog.Handler, r *Redactor) slog.Handler {
	return handler{inner: inner, r: r}
}

// handler is the slog.Handler of Logger.
type handler struct {
	inner slog.Handler
	r     *Redactor
}

func (h handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return handler{inner: h.inner.WithAttrs(red), r: h.r}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{inner: h.inner.WithGroup(name), r: h.r}
}

func (h handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		red := make([]any, len(group))
		for i, g := range group {
			red[i] = h.attr(g)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.Redact(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.r.Redact(x.String()))
		case []string:
			red := make([]string, len(x))
			for i, s := range x {
				red[i] = h.r.Redact(s)
			}
			return slog.Any(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
