package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/workspace"
)

// The differential fuzz test of docs/architecture.md: for any tools/call body, either
// toolgate refuses it, or what a downstream server parses out of what
// toolgate forwards — with Go's encoding/json into structs (mcp-go's
// CallToolRequest, and a struct of the tool's declared fields), and with
// an exact-key reader — is what toolgate decided: the same tool name, the
// same arguments, numbers as the same literal text. It runs the parse and
// decision in process (jsonrpc.ParseMessage → callpipe.ParseCall →
// grantcheck.Decide → the re-encoded call the proxy sends); a smaller
// corpus goes through the built binary (TestExactnessFuzzCorpus).

// fuzzWorkspace declares one open MCP server "s" with two tools: store
// (declared properties, entity_type constrained) and echo (anything).
const fuzzWorkspace = `version: 1
mcp_servers:
  - id: s
    command: [srv]
    permission: open
agents:
  - id: a
    grants:
      - op: tool:s:store
        param_constraints: {entity_type: {enum: [note, contact]}}
      - tool:s:echo
`

const fuzzStoreSchema = `{"type":"object","properties":{"entity_type":{"type":"string"},"text":{"type":"string"},"kind":{"type":"string"},
"n":{"type":"number"},"o":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"string"}}}}}`

var (
	fuzzPolicyOnce sync.Once
	fuzzPolicy     *grantcheck.Policy
	fuzzPolicyErr  error
)

func exactPolicy(t testing.TB) *grantcheck.Policy {
	fuzzPolicyOnce.Do(func() {
		ws, err := workspace.Parse("fuzz.yaml", []byte(fuzzWorkspace))
		if err != nil {
			fuzzPolicyErr = err
			return
		}
		p, err := grantcheck.Compile(ws)
		if err != nil {
			fuzzPolicyErr = err
			return
		}
		fuzzPolicy, fuzzPolicyErr = p.WithServerTools("s", []grantcheck.ToolInfo{
			{Name: "store", InputSchema: json.RawMessage(fuzzStoreSchema)},
			{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		})
	})
	if fuzzPolicyErr != nil {
		t.Fatal(fuzzPolicyErr)
	}
	return fuzzPolicy
}

// storeFields is what a Go server binds store's arguments into.
type storeFields struct {
	EntityType *string `json:"entity_type"`
	Text       *string `json:"text"`
	Kind       *string `json:"kind"`
	N          any     `json:"n"`
	O          *struct {
		A any     `json:"a"`
		B *string `json:"b"`
	} `json:"o"`
}

// checkExactCall is the property, for one client message body. It
// reports why toolgate refused (or "" when it would forward the call) and
// fails t when a downstream could read the forwarded call differently.
func checkExactCall(t testing.TB, body []byte) string {
	m, err := jsonrpc.ParseMessage(body)
	if err != nil {
		return "envelope: " + err.Error()
	}
	// Whoever reads the envelope sees the method toolgate routed on.
	for _, view := range []func([]byte) (callView, error){goView, exactView} {
		if cv, err := view(body); err == nil && cv.Method != m.Method {
			t.Fatalf("toolgate routes %q as %q, a reader sees %q", body, m.Method, cv.Method)
		}
	}
	if m.Method != "tools/call" {
		return "not a call"
	}
	if m.Kind() != jsonrpc.KindRequest {
		return "no id"
	}
	// The answer carries the client's id as it was sent.
	resp, err := jsonrpc.ParseMessage((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{}`)}).Encode())
	if err != nil || !bytes.Equal(resp.ID, m.ID) {
		t.Fatalf("the answer to %q does not carry its id %s: %v", body, m.ID, err)
	}
	call, err := callpipe.ParseCall(m.Params)
	if err != nil {
		return "params: " + err.Error()
	}
	// What toolgate decides is what the client sent, read exactly.
	if orig, err := exactView(body); err != nil || orig.Name != call.Name || digestJSON(orig.Args) != call.Digest {
		t.Fatalf("toolgate decided %s %s, the client sent %+v (%v)\n%q", call.Name, call.ArgsJSON, orig, err, body)
	}
	d := exactPolicy(t).Decide("a", "s", call.Name, call.Args)
	if d.Outcome == grantcheck.Deny {
		return "denied: " + d.Reason
	}
	forwarded := (&jsonrpc.Message{ID: jsonrpc.IntID(7), Method: "tools/call", Params: call.Params()}).Encode()
	if _, err := jsonrpc.ParseMessage(forwarded); err != nil {
		t.Fatalf("toolgate forwards a message it would itself refuse: %v\n%s", err, forwarded)
	}
	again, err := callpipe.ParseCall(jsonrpc.Field(forwarded, "params"))
	if err != nil || again.Name != call.Name || again.Digest != call.Digest {
		t.Fatalf("the forwarded call parses as something else: %v %+v\n%s", err, again, forwarded)
	}
	for _, view := range []struct {
		how  string
		read func([]byte) (callView, error)
	}{{"encoding/json struct", goView}, {"exact keys, first wins", exactView}} {
		cv, err := view.read(forwarded)
		if err != nil || cv.Name != call.Name || digestJSON(cv.Args) != call.Digest {
			t.Fatalf("decided %s %s; a server reading %s gets %s %v (%v)\nclient: %q\nforwarded: %s",
				call.Name, call.ArgsJSON, view.how, cv.Name, cv.Args, err, body, forwarded)
		}
	}
	// mcp-go, as a Go server built on it reads the call.
	var req mcp.CallToolRequest
	var numErr *json.UnmarshalTypeError
	if err := json.Unmarshal(forwarded, &req); errors.As(err, &numErr) && strings.HasPrefix(numErr.Value, "number") {
		// A number no float64 holds (1e400): mcp-go refuses the whole
		// call, so nothing runs — not a different call.
		return "mcp-go cannot read a number"
	} else if err != nil || req.Params.Name != call.Name {
		t.Fatalf("mcp-go reads tool %q (%v), decided %q\n%s", req.Params.Name, err, call.Name, forwarded)
	}
	raw, _ := json.Marshal(req.GetRawArguments())
	if r, ok := req.GetRawArguments().(json.RawMessage); ok {
		raw = r
	}
	if got, err := decodeFirstWins(raw); err != nil || digestJSON(got) != call.Digest {
		t.Fatalf("mcp-go hands the tool arguments %s, decided %s", raw, call.ArgsJSON)
	}
	// A struct of store's declared fields binds the decided values only.
	if call.Name == "store" {
		var bound storeFields
		dec := json.NewDecoder(bytes.NewReader(call.ArgsJSON))
		dec.UseNumber()
		if err := dec.Decode(&bound); err == nil {
			checkBound(t, "entity_type", bound.EntityType, call.Args)
			checkBound(t, "text", bound.Text, call.Args)
			checkBound(t, "kind", bound.Kind, call.Args)
			if (bound.N == nil) != (call.Args["n"] == nil) || (bound.N != nil && digestJSON(bound.N) != digestJSON(call.Args["n"])) {
				t.Fatalf("a Go server binds n=%v, decided %v (%s)", bound.N, call.Args["n"], call.ArgsJSON)
			}
			o, _ := call.Args["o"].(map[string]any)
			if bound.O != nil && o != nil {
				checkBound(t, "o.b", bound.O.B, o)
				if digestJSON(bound.O.A) != digestJSON(o["a"]) {
					t.Fatalf("a Go server binds o.a=%v, decided %v (%s)", bound.O.A, o["a"], call.ArgsJSON)
				}
			}
		}
	}
	return ""
}

func checkBound(t testing.TB, key string, got *string, args map[string]any) {
	name := key[strings.LastIndexByte(key, '.')+1:]
	want, present := args[name].(string)
	switch {
	case got == nil && present:
		t.Fatalf("a Go server binds no %s, decided %q", key, want)
	case got != nil && !present && args[name] != nil:
		t.Fatalf("a Go server binds %s=%q, decided %v", key, *got, args[name])
	case got != nil && present && *got != want:
		t.Fatalf("a Go server binds %s=%q, decided %q", key, *got, want)
	case got != nil && args[name] == nil:
		t.Fatalf("a Go server binds %s=%q from a key toolgate did not decide on (%v)", key, *got, args)
	}
}

// FuzzExactCall is the differential fuzz target. An input whose first
// byte is 'G' drives the generator (genCall) — duplicate keys, case
// variants at every level, odd numbers, odd ids, escapes, nesting —; any
// other input is a message body as is.
func FuzzExactCall(f *testing.F) {
	for _, a := range recorderAttacks {
		f.Add([]byte(strings.ReplaceAll(a.body, "@ID@", "1")))
	}
	for i := range 64 {
		f.Add(append([]byte("G"), choices(uint64(i))...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body := data
		if len(data) > 0 && data[0] == 'G' {
			body = genCall(data[1:])
		}
		checkExactCall(t, body)
	})
}

// choices is a fixed pseudo-random draw of generator choices.
func choices(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x70019a7e))
	b := make([]byte, 96)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// gen draws choices from fuzz input.
type gen struct {
	data []byte
	i    int
}

func (g *gen) pick(n int) int {
	if g.i >= len(g.data) || n <= 1 {
		g.i++
		return 0
	}
	c := int(g.data[g.i])
	g.i++
	return c % n
}

func (g *gen) one(opts ...string) string { return opts[g.pick(len(opts))] }

// genCall builds a tools/call body from choices.
func genCall(data []byte) []byte {
	g := &gen{data: data}
	var members []string
	members = append(members, `"jsonrpc":"2.0"`)
	switch g.pick(12) {
	case 0:
		// no id
	case 1:
		members = append(members, `"id":null`)
	default:
		members = append(members, `"id":`+g.one(`1`, `"a"`, `0`, `-0`, `1.0`, `1e3`, `9007199254740993`, `""`, `"\u0000"`, `"\ud83d\ude00"`, `-1`, `123456789012345678901234567890`, `1E-7`))
	}
	members = append(members, `"method":`+g.one(`"tools/call"`, `"tools/call"`, `"tools/call"`, `"tools\/call"`, `"tools/Call"`))
	if g.pick(10) == 0 {
		members = append(members, g.one(`"Method":"tools/list"`, `"method":"ping"`, `"ID":2`, `"Params":{}`, `"JSONRPC":"2.0"`))
	}
	members = append(members, `"params":`+genParams(g))
	shuffle(g, members)
	return []byte("{" + strings.Join(members, ",") + "}")
}

func genParams(g *gen) string {
	if g.pick(16) == 0 {
		return g.one(`[]`, `null`, `"store"`, `1`)
	}
	var members []string
	switch g.pick(8) {
	case 0:
		members = append(members, `"name":`+g.one(`1`, `null`, `["store"]`, `""`, `"st\u006fre"`, `"store\ud800"`, `"STORE"`))
	default:
		members = append(members, `"name":`+g.one(`"store"`, `"echo"`, `"store"`, `"st\u006fre"`, `"ec\/ho"`))
	}
	if g.pick(4) != 0 {
		members = append(members, `"arguments":`+genObject(g, 0))
	}
	for n := g.pick(3); n > 0; n-- {
		members = append(members, g.one(
			`"Name":"echo"`, `"NAME":"store"`, `"Arguments":{"entity_type":"secret"}`, `"argument\u017f":{}`,
			`"_meta":{"progressToken":`+genNumber(g)+`}`, `"_Meta":{}`, `"task":{"ttl":1000}`, `"extra":{"name":"echo"}`,
			`"name":"echo"`, `"arguments":{}`, `"n\u0061me":"echo"`, `"requestState":"x"`, `"inputResponses":{}`))
	}
	shuffle(g, members)
	return "{" + strings.Join(members, ",") + "}"
}

var argKeys = []string{
	`"entity_type"`, `"Entity_Type"`, `"ENTITY_TYPE"`, `"entity\u005ftype"`, `"text"`, `"Text"`, `"kind"`, `"\u212aind"`,
	`"n"`, `"N"`, `"o"`, `"O"`, `"a"`, `"A"`, `"b"`, `"x"`, `"\u00e9"`, `"\u00c9"`, `"ſ"`, `"s"`, `"S"`, `""`,
}

func genObject(g *gen, depth int) string {
	var members []string
	for n := g.pick(5); n >= 0; n-- {
		members = append(members, argKeys[g.pick(len(argKeys))]+":"+genValue(g, depth+1))
	}
	return "{" + strings.Join(members, ",") + "}"
}

func genValue(g *gen, depth int) string {
	switch c := g.pick(10); {
	case c < 3:
		return g.one(`"note"`, `"contact"`, `"secret"`, `"n\u006fte"`, `"note\u0000"`, `"\ud83d\ude00"`, `"\ud800"`, `"<&>"`,
			`"a\"b\\c\/d"`, `"\u2028"`, `"\uDFFF\uD800"`, `"é"`, `"e\u0301"`, `""`)
	case c < 6:
		return genNumber(g)
	case c < 7:
		return g.one(`true`, `false`, `null`)
	case c < 8 && depth < 4:
		return "[" + genValue(g, depth+1) + "," + genValue(g, depth+1) + "]"
	case depth < 4:
		return genObject(g, depth)
	}
	return `"leaf"`
}

func genNumber(g *gen) string {
	return g.one(`0`, `-0`, `0.0`, `-0.0`, `1`, `9007199254740992`, `9007199254740993`, `-9007199254740993`,
		`1e400`, `-1e400`, `1e-400`, `1E+2`, `1.5e-7`, `0.1`, `0.30000000000000004`, `123456789012345678901234567890`,
		`1.0000000000000000000000001`, `2e308`, `0e10`, `100000000000000000000000000000000000001e-38`)
}

func shuffle(g *gen, s []string) {
	for i := len(s) - 1; i > 0; i-- {
		j := g.pick(i + 1)
		s[i], s[j] = s[j], s[i]
	}
}

// TestExactnessFuzzCorpus runs a generated corpus through the built
// binary, over HTTP and stdio, to the mcp-go and by-hand recorders: every
// body is exactly one decision, and what ran is what was decided (or
// nothing). The in-process property says which bodies must be refused;
// the binary must agree.
func TestExactnessFuzzCorpus(t *testing.T) {
	t.Parallel()
	b := newBench(t, "wait: 50ms\nttl: 10m")
	d := b.startDaemon(t)
	// The recorder's open-ended read is read_graph; the fuzz policy's is echo.
	toRecorder := strings.NewReplacer(`"echo"`, `"read_graph"`, `"ec\/ho"`, `"read\/graph"`)
	var corpus [][]byte
	for i := range 80 {
		body := genCall(choices(uint64(i)))
		corpus = append(corpus, []byte(toRecorder.Replace(string(body))))
	}
	for _, c := range []struct{ transport, surface string }{{"http", "gostdio"}, {"stdio", "rawhttp"}} {
		t.Run(c.transport+"/"+c.surface, func(t *testing.T) {
			p := b.peer(t, d, c.transport, c.surface, initPlain)
			sent, allowed := 0, 0
			for _, body := range corpus {
				m, err := jsonrpc.ParseMessage(body)
				if err != nil || m.Method != "tools/call" {
					continue // refused before any call is read (TestExactnessAttacks covers these)
				}
				id := ""
				if m.Kind() == jsonrpc.KindRequest {
					id = string(m.ID)
				}
				// The recorder's tools differ from the fuzz policy's; the
				// invariant holds whatever the decision.
				a := b.send(t, p, c.surface, string(body), string(body), id)
				if d := a.exact(t); d.Decision == "allow" {
					allowed++
				}
				sent++
			}
			if sent < 20 || allowed == 0 {
				t.Errorf("the corpus sent %d calls, %d allowed: too few to show anything", sent, allowed)
			}
		})
	}
}
