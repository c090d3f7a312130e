package redact

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
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

// handler is the slog.Handler of Logger. Every line it passes on names a
// key once at each level: a logger built With("server", id) whose caller
// also logs "server" would otherwise write the key twice, which a JSON
// reader resolves either way (strict ones refuse the line). A repeat with
// the same value is dropped; one with another value is kept as key_2, key_3…
type handler struct {
	inner slog.Handler
	r     *Redactor
	// keys are the attributes already added at the current group level.
	keys []slog.Attr
}

func (h handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	seen := make([]slog.Attr, len(h.keys), len(h.keys)+rec.NumAttrs())
	copy(seen, h.keys)
	rec.Attrs(func(a slog.Attr) bool {
		if a, ok := uniqueKey(seen, h.attr(a)); ok {
			out.AddAttrs(a)
			seen = append(seen, a)
		}
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	keys := h.keys[:len(h.keys):len(h.keys)]
	red := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if a, ok := uniqueKey(keys, h.attr(a)); ok {
			red = append(red, a)
			keys = append(keys, a)
		}
	}
	return handler{inner: h.inner.WithAttrs(red), r: h.r, keys: keys}
}

func (h handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return handler{inner: h.inner.WithGroup(name), r: h.r}
}

// uniqueKey returns a as it may be added after seen: unchanged when its key
// is new; ok false when seen has the same key with an equal value; else
// renamed key_2, key_3… to the first name not taken.
func uniqueKey(seen []slog.Attr, a slog.Attr) (slog.Attr, bool) {
	if a.Key == "" {
		return a, true // inlined group members or an empty attr: the handler's own rules
	}
	taken := func(key string) (slog.Attr, bool) {
		for _, s := range seen {
			if s.Key == key {
				return s, true
			}
		}
		return slog.Attr{}, false
	}
	prev, dup := taken(a.Key)
	if !dup {
		return a, true
	}
	if prev.Equal(a) {
		return a, false
	}
	for n := 2; ; n++ {
		key := a.Key + "_" + strconv.Itoa(n)
		if _, dup := taken(key); !dup {
			return slog.Attr{Key: key, Value: a.Value}, true
		}
	}
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
