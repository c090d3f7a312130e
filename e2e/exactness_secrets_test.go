package e2e

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// secretMarks are fragments of the bench's credentials that no
// redaction marker or encoding of them contains: a text holding one holds
// (part of) a credential.
var secretMarks = []string{"tg-cred-9f3a", "z-7e51", "tgcredPLAIN", "456789abcdef"}

// leaked names where in text a credential shows, in any encoding: as
// written, JSON-escaped, Go-quoted, or (for a JSON document) in any
// string as a reader reads it — decoded, its \u escapes decoded again, a
// string that is JSON read as JSON, the text items of an array read
// joined. "" when nowhere.
func leaked(text string) string {
	for _, m := range secretMarks {
		if i := strings.Index(text, m); i >= 0 {
			return excerpt(text, i)
		}
	}
	for _, enc := range []string{jsonInner(benchSecret), strconv.Quote(benchSecret)[1 : len(strconv.Quote(benchSecret))-1]} {
		if i := strings.Index(text, enc); i >= 0 {
			return excerpt(text, i)
		}
	}
	// Decode every JSON document in text (one per line) and look again.
	for _, line := range strings.Split(text, "\n") {
		var v any
		if json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(line, "data: "))), &v) != nil {
			continue
		}
		var found string
		readerStrings(v, 0, func(s string) {
			for _, m := range append(secretMarks, benchSecret) {
				if found == "" && strings.Contains(s, m) {
					found = "decoded: " + s
				}
			}
		})
		if found != "" {
			return found
		}
	}
	return ""
}

// uEscape is one \uXXXX escape.
var uEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}`)

// readerStrings calls f with every string of v as a reader reads it: as
// decoded, with the \u escapes left in it decoded (up to four times), as
// a JSON document when it is one, and, for an array, its string elements
// and its elements' "text" members joined.
func readerStrings(v any, depth int, f func(string)) {
	walkStrings(v, func(s string) {
		f(s)
		for i := 0; i < 4 && strings.Contains(s, `\`); i++ {
			s = uEscape.ReplaceAllStringFunc(s, func(e string) string {
				n, _ := strconv.ParseUint(e[2:], 16, 32)
				return string(rune(n))
			})
			s = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(s)
			f(s)
		}
		var inner any
		if depth < 4 && json.Unmarshal([]byte(s), &inner) == nil {
			readerStrings(inner, depth+1, f)
		}
	})
	walkArrays(v, func(items []any) {
		var joined strings.Builder
		for _, e := range items {
			switch x := e.(type) {
			case string:
				joined.WriteString(x)
			case map[string]any:
				if t, ok := x["text"].(string); ok {
					joined.WriteString(t)
				}
			}
		}
		f(joined.String())
	})
}

func walkArrays(v any, f func([]any)) {
	switch x := v.(type) {
	case []any:
		f(x)
		for _, e := range x {
			walkArrays(e, f)
		}
	case map[string]any:
		for _, e := range x {
			walkArrays(e, f)
		}
	}
}

func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func excerpt(s string, i int) string {
	lo, hi := max(0, i-80), min(len(s), i+80)
	return s[lo:hi]
}

func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	}
}

// TestExactnessCredentials: a credential the workspace hands a proxied
// server (env on stdio, headers on HTTP) that the server echoes back — in
// a result, structuredContent and _meta, an isError result, a JSON-RPC
// error, an HTTP error body, a result with every character \u-escaped, or
// its stderr as it crashes; as a text that is itself JSON with the
// credential \u-escaped (value and key), or split across text blocks in
// pieces too short to be recognised alone, in a result and in an error —
// never reaches the agent, the audit or toolgate's log (debug level)
// unredacted; nor does a credential the agent quotes in an argument that
// fails a pattern.
func TestExactnessCredentials(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, transport := range []string{"http", "stdio"} {
		for _, surface := range []string{"gostdio", "rawstdio", "gohttp", "rawhttp"} {
			t.Run(transport+"/"+surface, func(t *testing.T) {
				p := b.peer(t, d, transport, surface, initPlain)
				var n ids
				hows := []string{"result", "structured", "toolerror", "error", "jsontext", "split", "jsontexterror", "spliterror"}
				if strings.HasPrefix(surface, "raw") {
					hows = append(hows, "escaped")
				}
				if surface == "rawhttp" {
					hows = append(hows, "httperror")
				}
				if strings.HasSuffix(surface, "stdio") {
					hows = append(hows, "crash") // last: the server dies
				}
				var secretArgs []string
				for _, s := range []string{benchSecret, benchSecretPlain} {
					q, _ := json.Marshal(s)
					secretArgs = append(secretArgs, string(q))
				}
				auditBefore := len(readAudit(t, b.audit))
				for _, how := range hows {
					a := b.call(t, p, &n, surface, "leak "+how, `{"name":"leak","arguments":{"how":"`+how+`"}}`)
					if d := a.exact(t); d.Decision != "allow" {
						t.Fatalf("leak %s refused: %s", how, d.Reason)
					}
					for _, m := range a.reply.msgs {
						if where := leaked(string(m)); where != "" {
							t.Errorf("leak %s: the agent received a credential: …%s…", how, where)
						}
					}
					if how != "crash" && !strings.Contains(string(a.reply.last()), "[REDACTED:") {
						t.Errorf("leak %s: the reply shows no redaction (did the server leak at all?): %s", how, a.reply.last())
					}
				}
				for _, arg := range secretArgs {
					a := b.call(t, p, &n, surface, "secret argument", `{"name":"leak","arguments":{"how":`+arg+`}}`)
					if d := a.refused(t); !strings.Contains(d.Reason, "pattern") {
						t.Errorf("a credential in a pattern-bound argument: %s, want a pattern refusal", d.Reason)
					}
				}
				for _, ev := range readAudit(t, b.audit)[auditBefore:] {
					if where := leaked(ev.raw); where != "" {
						t.Errorf("the audit holds a credential: …%s…", where)
					}
				}
				if where := leaked(p.logText()); where != "" {
					t.Errorf("toolgate's log holds a credential: …%s…", where)
				}
			})
		}
	}
}

// TestExactnessCredentialsInNotifications: a credential a proxied server
// sends in a notification during a call (notifications/message, a log
// line) — as written, as a JSON text with it \u-escaped, split across the
// text blocks of its data — is redacted before it reaches the agent, like
// one in the call's result, and reaches neither the audit nor toolgate's
// log.
func TestExactnessCredentialsInNotifications(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, transport := range []string{"http", "stdio"} {
		for _, surface := range []string{"gostdio", "rawstdio", "gohttp", "rawhttp"} {
			t.Run(transport+"/"+surface, func(t *testing.T) {
				p := b.peer(t, d, transport, surface, initPlain)
				var n ids
				auditBefore := len(readAudit(t, b.audit))
				for _, how := range []string{"log", "jsontextlog", "splitlog"} {
					a := b.call(t, p, &n, surface, "leak "+how, `{"name":"leak","arguments":{"how":"`+how+`"}}`)
					a.exact(t)
					var notes []string
					for _, m := range a.reply.msgs {
						if strings.Contains(string(m), "notifications/message") {
							notes = append(notes, string(m))
						}
						if where := leaked(string(m)); where != "" {
							t.Errorf("%s: the agent received a credential in a notification: …%s…", how, where)
						}
					}
					// The by-hand server sends its notification before the
					// response; mcp-go may send it after, into the next reply
					// (which is checked too) or after the last.
					if strings.HasPrefix(surface, "raw") && !strings.Contains(strings.Join(notes, "\n"), "[REDACTED:") {
						t.Errorf("%s: no redacted notification arrived (did the server leak at all?): %q", how, notes)
					}
				}
				for _, ev := range readAudit(t, b.audit)[auditBefore:] {
					if where := leaked(ev.raw); where != "" {
						t.Errorf("the audit holds a credential: …%s…", where)
					}
				}
				if where := leaked(p.logText()); where != "" {
					t.Errorf("toolgate's log holds a credential: …%s…", where)
				}
			})
		}
	}
}
