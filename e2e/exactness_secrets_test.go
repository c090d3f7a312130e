package e2e

import (
	"encoding/json"
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
// string once decoded. "" when nowhere.
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
		walkStrings(v, func(s string) {
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
// its stderr as it crashes — never
// reaches the agent, the audit or toolgate's log (debug level) unredacted;
// nor does a credential the agent quotes in an argument that fails a
// pattern.
func TestExactnessCredentials(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, transport := range []string{"http", "stdio"} {
		for _, surface := range []string{"gostdio", "rawstdio", "gohttp", "rawhttp"} {
			t.Run(transport+"/"+surface, func(t *testing.T) {
				p := b.peer(t, d, transport, surface, initPlain)
				var n ids
				hows := []string{"result", "structured", "toolerror", "error"}
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
// line) is redacted before it reaches the agent, like one in the call's
// result.
func TestExactnessCredentialsInNotifications(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, transport := range []string{"http", "stdio"} {
		for _, surface := range []string{"gostdio", "rawstdio", "gohttp", "rawhttp"} {
			t.Run(transport+"/"+surface, func(t *testing.T) {
				p := b.peer(t, d, transport, surface, initPlain)
				var n ids
				a := b.call(t, p, &n, surface, "leak log", `{"name":"leak","arguments":{"how":"log"}}`)
				a.exact(t)
				for _, m := range a.reply.msgs {
					if where := leaked(string(m)); where != "" {
						t.Errorf("the agent received a credential in a notification: …%s…", where)
					}
				}
			})
		}
	}
}
