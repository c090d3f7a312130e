package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// modernPeer speaks MCP 2026-07-28 to one toolgate endpoint: no session,
// every request carries its protocol version and capabilities in _meta,
// and its method and tool name in the Mcp-Method and Mcp-Name headers,
// which it sets from the body as a client would (from the first "name").
type modernPeer struct {
	http *httpPeer
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func (p *modernPeer) logText() string { return p.http.logText() }

func (p *modernPeer) exchange(t testing.TB, body []byte, id string) reply {
	t.Helper()
	text := string(body)
	if i := strings.Index(text, `"params":{`); i >= 0 {
		at := i + len(`"params":{`)
		sep := ","
		if strings.HasPrefix(text[at:], "}") {
			sep = ""
		}
		text = text[:at] + modernMeta + sep + text[at:]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", p.http.url, bytes.NewReader([]byte(text)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+p.http.token)
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	if cv, err := exactView([]byte(text)); err == nil {
		req.Header.Set("Mcp-Method", cv.Method)
		if cv.Name != "" {
			req.Header.Set("Mcp-Name", headerValue(cv.Name))
		}
	} else {
		req.Header.Set("Mcp-Method", "tools/call")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	for _, line := range strings.Split(buf.String(), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		if strings.HasPrefix(line, "{") {
			r.msgs = append(r.msgs, []byte(line))
		}
	}
	return r
}

// headerValue writes a header value as MCP asks: as is when it is plain
// ASCII, else Base64 in =?base64?…?=.
func headerValue(s string) string {
	plain := utf8.ValidString(s)
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f
	}
	if plain && strings.TrimSpace(s) == s {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// TestExactnessAttacksModern: the attacks of TestExactnessAttacks in MCP
// 2026-07-28 (stateless requests) over the daemon's streamable HTTP.
func TestExactnessAttacksModern(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, surface := range []string{"gostdio", "rawhttp"} {
		t.Run(surface, func(t *testing.T) {
			p := &modernPeer{http: &httpPeer{url: d.base + "/mcp/" + surface, token: attackerToken, log: d.logText}}
			var n ids
			for _, a := range recorderAttacks {
				b.runAttack(t, p, &n, "modern", surface, a)
			}
		})
	}
}

// modernUnaudited are the attacks that, in 2026-07-28, mcpserve refuses
// while validating the request's headers and _meta — before any pipeline
// sees them — so nothing runs but nothing is audited either
// (TestExactnessModernAudited).
var modernUnaudited = map[string]bool{
	"Name beside name": true, "Name before name": true, "Name alone": true, "NAME alone": true,
	"name escaped twice": true, "_Meta beside _meta": true, "name a number": true, "name an array": true,
	"name null": true, "name empty": true, "params an array": true, "params a string": true, "params null": true,
	"params absent": true, "arguments _meta an array": true, "duplicate key in _meta": true,
	"lone low surrogate in the name": true, "overlong UTF-8 in the name": true,
}

// TestExactnessModernAudited: in 2026-07-28 too, a malformed tools/call
// is one audited refusal.
func TestExactnessModernAudited(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	p := &modernPeer{http: &httpPeer{url: d.base + "/mcp/rawstdio", token: attackerToken, log: d.logText}}
	var n ids
	for _, a := range recorderAttacks {
		if !modernUnaudited[a.label] {
			continue
		}
		id := n.next()
		at := b.send(t, p, "rawstdio", a.label, strings.ReplaceAll(a.body, "@ID@", id), id)
		if d := at.refused(t); d.Decision != "deny" {
			t.Errorf("%s: %s", a.label, d.Decision)
		}
	}
}
