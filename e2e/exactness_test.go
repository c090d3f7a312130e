package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The exactness attacks of docs/architecture.md ("The message decided is the message
// executed"), each sent as raw JSON-RPC by a hostile agent through
// toolgate's streamable HTTP (daemon, bearer token) and stdio (serve
// --agent --stdio --surface) to a recording downstream: mcp-go and a
// by-hand server, each over stdio and streamable HTTP, and
// @modelcontextprotocol/server-memory. For every attempt, exactly one
// decision is audited, and what the server ran is what was decided — or
// nothing ran.

const initPlain = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}`

// benchPeer opens a raw client of surface over transport ("http" through
// daemon d, or "stdio").
func (b *bench) peer(t *testing.T, d *loggedDaemon, transport, surface, init string) peer {
	t.Helper()
	if transport == "http" {
		p := newHTTPPeer(t, d.base+"/mcp/"+surface, attackerToken, init)
		p.log = d.logText
		return p
	}
	return newStdioPeer(t, b, surface, init)
}

// ids numbers requests within a test.
type ids struct{ n int }

func (i *ids) next() string { i.n++; return fmt.Sprint(i.n + 100) }

// call sends params as a tools/call request with a fresh id.
func (b *bench) call(t *testing.T, p peer, n *ids, surface, label, params string) *attempt {
	t.Helper()
	id := n.next()
	return b.send(t, p, surface, label, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":`+params+`}`, id)
}

// attack is one hostile message; @ID@ in body stands for a fresh id.
type attack struct {
	label, body string
	// allowed marks the controls: calls that must run (so the test can
	// tell a refusal from a broken bench).
	allowed bool
	// envelope marks messages refused before any tools/call is read (the
	// JSON-RPC envelope itself is ambiguous or unreadable).
	envelope bool
}

func callBody(params string) string {
	return `{"jsonrpc":"2.0","id":@ID@,"method":"tools/call","params":` + params + `}`
}

// recorderAttacks are the attacks on a recording surface (its tools:
// read_graph, store {entity_type (enum note|contact), text, kind}, …).
var recorderAttacks = []attack{
	// Controls.
	{label: "control read_graph", body: callBody(`{"name":"read_graph","arguments":{}}`), allowed: true},
	{label: "control store", body: callBody(`{"name":"store","arguments":{"entity_type":"note","text":"hi"}}`), allowed: true},
	{label: "control store with escapes", body: callBody(`{"name":"store","arguments":{"entity_type":"contact","text":"\u00e9\ud83d\ude00 <&> \"q\" \\ \u2028 \/"}}`), allowed: true},
	{label: "control null arguments", body: callBody(`{"name":"read_graph","arguments":null}`), allowed: true},
	{label: "control unknown params member dropped", body: callBody(`{"name":"read_graph","arguments":{},"extra":{"name":"delete_entities"}}`), allowed: true},

	// 1. A second key differing only in case.
	{label: "Name beside name", body: callBody(`{"name":"delete_entities","arguments":{"entityNames":["victim"]},"Name":"read_graph"}`)},
	{label: "Name before name", body: callBody(`{"Name":"delete_entities","name":"read_graph","arguments":{}}`)},
	{label: "Name alone", body: callBody(`{"Name":"read_graph","arguments":{}}`)},
	{label: "NAME alone", body: callBody(`{"NAME":"read_graph","arguments":{}}`)},
	{label: "name escaped twice", body: callBody(`{"\u006eame":"delete_entities","name":"read_graph","arguments":{}}`)},
	{label: "Arguments beside arguments (beat the enum)", body: callBody(`{"name":"store","arguments":{"entity_type":"note"},"Arguments":{"entity_type":"secret"}}`)},
	{label: "Arguments before arguments", body: callBody(`{"name":"store","Arguments":{"entity_type":"secret"},"arguments":{"entity_type":"note"}}`)},
	{label: "Arguments alone", body: callBody(`{"name":"store","Arguments":{"entity_type":"note"}}`)},
	{label: "argument\u017f (long s) alone", body: callBody(`{"name":"store","argument\u017f":{"entity_type":"secret"}}`)},
	{label: "argument\u017f beside arguments", body: callBody(`{"name":"store","arguments":{"entity_type":"note"},"argument\u017f":{"entity_type":"secret"}}`)},
	{label: "_Meta beside _meta", body: callBody(`{"name":"read_graph","arguments":{},"_meta":{},"_Meta":{"progressToken":1}}`)},
	{label: "Method beside method", envelope: true, body: `{"jsonrpc":"2.0","id":@ID@,"method":"tools/call","Method":"tools/list","params":{"name":"read_graph","arguments":{}}}`},
	{label: "Method before method", envelope: true, body: `{"jsonrpc":"2.0","id":@ID@,"Method":"tools/call","method":"ping","params":{"name":"read_graph","arguments":{}}}`},
	{label: "Method alone", envelope: true, body: `{"jsonrpc":"2.0","id":@ID@,"Method":"tools/call","params":{"name":"read_graph","arguments":{}}}`},
	{label: "Params beside params", envelope: true, body: `{"jsonrpc":"2.0","id":@ID@,"method":"tools/call","params":{"name":"read_graph","arguments":{}},"Params":{"name":"delete_entities","arguments":{"entityNames":["victim"]}}}`},
	{label: "duplicate method", envelope: true, body: `{"jsonrpc":"2.0","id":@ID@,"method":"ping","method":"tools/call","params":{"name":"read_graph","arguments":{}}}`},
	{label: "ID beside id", envelope: true, body: `{"jsonrpc":"2.0","id":@ID@,"ID":7,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`},

	// 2. Argument keys differing only in case.
	{label: "Entity_Type beside entity_type", body: callBody(`{"name":"store","arguments":{"entity_type":"note","Entity_Type":"secret"}}`)},
	{label: "Entity_Type before entity_type", body: callBody(`{"name":"store","arguments":{"Entity_Type":"secret","entity_type":"note"}}`)},
	{label: "Entity_Type alone (constrained)", body: callBody(`{"name":"store","arguments":{"Entity_Type":"note"}}`)},
	{label: "Text alone (declared)", body: callBody(`{"name":"store","arguments":{"entity_type":"note","Text":"x"}}`)},
	{label: "KIND alone (declared)", body: callBody(`{"name":"store","arguments":{"entity_type":"note","KIND":"x"}}`)},
	{label: "\u212aind (Kelvin sign) alone (declared)", body: callBody(`{"name":"store","arguments":{"entity_type":"note","\u212aind":"x"}}`)},
	{label: "case variants nested", body: callBody(`{"name":"store","arguments":{"entity_type":"note","o":{"a":1,"A":2}}}`)},

	// 3. tools/call without an id.
	{label: "notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_graph","arguments":{}}}`},
	{label: "id null", body: `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`},
	{label: "notification write", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"store","arguments":{"entity_type":"note"}}}`},
	{label: "notification with a case variant", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"store","arguments":{"entity_type":"note"},"Arguments":{}}}`},

	// 4. Malformed tools/call.
	{label: "arguments an array", body: callBody(`{"name":"store","arguments":[{"entity_type":"note"}]}`)},
	{label: "arguments a string", body: callBody(`{"name":"store","arguments":"{\"entity_type\":\"note\"}"}`)},
	{label: "arguments a number", body: callBody(`{"name":"read_graph","arguments":1}`)},
	{label: "name a number", body: callBody(`{"name":1,"arguments":{}}`)},
	{label: "name an array", body: callBody(`{"name":["read_graph"],"arguments":{}}`)},
	{label: "name null", body: callBody(`{"name":null,"arguments":{}}`)},
	{label: "name empty", body: callBody(`{"name":"","arguments":{}}`)},
	{label: "params an array", body: callBody(`["read_graph",{}]`)},
	{label: "params a string", body: callBody(`"read_graph"`)},
	{label: "params null", body: callBody(`null`)},
	{label: "params absent", body: `{"jsonrpc":"2.0","id":@ID@,"method":"tools/call"}`},
	{label: "arguments _meta an array", body: callBody(`{"name":"read_graph","arguments":{},"_meta":[1]}`)},
	{label: "duplicate key deep in arguments", body: callBody(`{"name":"store","arguments":{"entity_type":"note","o":{"p":[{"q":1,"q":2}]}}}`)},
	{label: "duplicate key in arguments", body: callBody(`{"name":"store","arguments":{"entity_type":"note","entity_type":"secret"}}`)},
	{label: "duplicate key in _meta", body: callBody(`{"name":"read_graph","arguments":{},"_meta":{"progressToken":1,"progressToken":2}}`)},
	{label: "lone high surrogate in an argument", body: callBody(`{"name":"store","arguments":{"entity_type":"note","text":"\ud800"}}`)},
	{label: "lone low surrogate in the name", body: callBody(`{"name":"read_graph\udc00","arguments":{}}`)},
	{label: "reversed surrogate pair", body: callBody(`{"name":"store","arguments":{"entity_type":"note","text":"\udc00\ud800"}}`)},
	{label: "invalid UTF-8 in an argument", body: callBody("{\"name\":\"store\",\"arguments\":{\"entity_type\":\"note\",\"text\":\"\xff\xfe\"}}")},
	{label: "invalid UTF-8 in an argument key", body: callBody("{\"name\":\"store\",\"arguments\":{\"entity_type\":\"note\",\"te\xc0\xafxt\":\"x\"}}")},
	{label: "overlong UTF-8 in the name", body: callBody("{\"name\":\"read_graph\xc0\x80\",\"arguments\":{}}")},
	{label: "trailing data", envelope: true, body: callBody(`{"name":"read_graph","arguments":{}}`) + `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"delete_entities","arguments":{}}}`},
}

// TestExactnessAttacks: every attack on every downstream, over both
// client transports.
func TestExactnessAttacks(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, transport := range []string{"http", "stdio"} {
		for _, surface := range []string{"gostdio", "rawstdio", "gohttp", "rawhttp"} {
			t.Run(transport+"/"+surface, func(t *testing.T) {
				p := b.peer(t, d, transport, surface, initPlain)
				var n ids
				for _, a := range recorderAttacks {
					b.runAttack(t, p, &n, transport, surface, a)
				}
			})
		}
	}
}

func (b *bench) runAttack(t *testing.T, p peer, n *ids, transport, surface string, a attack) {
	t.Helper()
	id := n.next()
	body := strings.ReplaceAll(a.body, "@ID@", id)
	wantID := id
	if !strings.Contains(a.body, "@ID@") {
		wantID = "" // no id: the transport answers
	}
	if a.envelope && transport == "stdio" {
		wantID = "" // an unreadable message is answered with id null
	}
	at := b.send(t, p, surface, a.label, body, wantID)
	if a.allowed {
		if d := at.exact(t); d.Decision != "allow" {
			t.Errorf("%s: control refused: %s", a.label, d.Reason)
		}
		return
	}
	if (a.envelope || transport == "modern" && modernUnaudited[a.label]) && len(at.decisions) == 0 {
		// Refused by the transport before any call was read.
		if len(at.wire) != 0 || len(at.execs) != 0 {
			t.Errorf("%s: the server received %q", a.label, at.wire)
		}
		if text, isErr := at.reply.toolText(); !isErr && at.reply.status < 400 {
			t.Errorf("%s: not refused: %q", a.label, text)
		}
		t.Logf("%s: refused by the transport, NOT AUDITED: %s", a.label, at.reply.last())
		return
	}
	d := at.refused(t)
	if d.Decision != "deny" {
		t.Errorf("%s: decision %s, want deny", a.label, d.Decision)
	}
	if a.envelope || transport == "modern" && modernUnaudited[a.label] {
		// Refused by the transport with the protocol's error (its id may be
		// unreadable), and audited as one malformed call.
		if len(at.wire) != 0 || len(at.execs) != 0 {
			t.Errorf("%s: the server received %q", a.label, at.wire)
		}
		return
	}
	if !strings.Contains(at.label, "notification") && !strings.Contains(at.label, "id null") {
		if text, _ := at.reply.toolText(); !strings.HasPrefix(text, "DENIED: ") {
			t.Errorf("%s: reply %q, want a DENIED result", a.label, text)
		}
	} else if transport == "http" && at.reply.status != 400 {
		t.Errorf("%s: HTTP %d, want 400", a.label, at.reply.status)
	}
}

// TestExactnessMemoryServer: the same tricks against
// @modelcontextprotocol/server-memory, where the agent may read the graph
// and create entities but not delete them: the entity survives every
// attempt to delete it under a granted name.
func TestExactnessMemoryServer(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			p := b.peer(t, d, transport, "memory", initPlain)
			var n ids
			victim := "victim-" + transport
			create := b.call(t, p, &n, "memory", "create victim", `{"name":"create_entities","arguments":{"entities":[{"name":"`+victim+`","entityType":"note","observations":["keep me"]}]}}`)
			if d := create.exact(t); d.Decision != "allow" {
				t.Fatalf("create_entities refused: %s", d.Reason)
			}
			del := `{"entityNames":["` + victim + `"]}`
			for _, a := range []attack{
				{label: "Name beside name", body: callBody(`{"name":"delete_entities","arguments":` + del + `,"Name":"read_graph"}`)},
				{label: "Name before name", body: callBody(`{"Name":"delete_entities","name":"read_graph","arguments":` + del + `}`)},
				{label: "Arguments beside arguments", body: callBody(`{"name":"read_graph","arguments":{},"Arguments":` + del + `}`)},
				{label: "name escaped twice", body: callBody(`{"\u006eame":"delete_entities","name":"read_graph","arguments":` + del + `}`)},
				{label: "entityType case variant", body: callBody(`{"name":"create_entities","arguments":{"entities":[{"name":"x","entityType":"note","EntityType":"secret","observations":[]}]}}`)},
				{label: "delete as a notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"delete_entities","arguments":` + del + `}}`},
				{label: "read_graph as a notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_graph","arguments":{}}}`},
				{label: "read_graph id null", body: `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"read_graph","arguments":{}}}`},
				{label: "Method beside method", envelope: true, body: `{"jsonrpc":"2.0","id":@ID@,"method":"tools/call","Method":"tools/list","params":{"name":"delete_entities","arguments":` + del + `}}`},
				{label: "control read_graph", body: callBody(`{"name":"read_graph","arguments":{}}`), allowed: true},
			} {
				b.runAttack(t, p, &n, transport, "memory", a)
			}
			mem, err := os.ReadFile(filepath.Join(b.dir, "memory.jsonl"))
			if err != nil || !strings.Contains(string(mem), victim) {
				t.Errorf("the victim entity was deleted (memory file: %q, %v)", mem, err)
			}
			if strings.Contains(string(mem), "secret") {
				t.Errorf("an entity was created from a case-variant key: %s", mem)
			}
		})
	}
}

// TestExactnessEnvelopeAudited: a message that names tools/call in an
// ambiguous envelope ("Method" beside "method", a duplicate "method",
// "Params" beside "params", "ID" beside "id") is an attempt at a call and
// is audited as one refused decision, like a malformed call.
func TestExactnessEnvelopeAudited(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			p := b.peer(t, d, transport, "rawstdio", initPlain)
			var n ids
			for _, a := range recorderAttacks {
				if !a.envelope || a.label == "trailing data" {
					continue
				}
				body := strings.ReplaceAll(a.body, "@ID@", n.next())
				at := b.send(t, p, "rawstdio", a.label, body, "")
				if d := at.refused(t); d.Decision != "deny" {
					t.Errorf("%s: %s", a.label, d.Decision)
				}
			}
		})
	}
}
