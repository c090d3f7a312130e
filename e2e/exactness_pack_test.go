package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExactnessPackSurface: the same parse and pipeline serve command
// packs. The attacks on store reach a pack command (argvecho, which
// prints the argv it got) through the daemon and a stdio instance: every
// attempt is one decision, and the argv that ran holds exactly the
// decided values — or nothing ran.
func TestExactnessPackSurface(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
command_packs:
  - id: tags
    permission: open
    commands:
      - id: store
        description: Store a tagged text.
        argv: [`+argvEcho+`, "{entity_type}", "{text}"]
        inputs: {type: object, properties: {entity_type: {type: string}, text: {type: string}, kind: {type: string}}, required: [entity_type, text]}
        effects: read
agents:
  - id: attacker
    token: {env: ATTACKER_TOKEN}
    grants:
      - op: tool:tags:store
        param_constraints: {entity_type: {enum: [note, contact]}}
`)
	b := &bench{dir: dir, ws: ws, audit: filepath.Join(dir, "audit.jsonl"), records: map[string]string{}, env: []string{"ATTACKER_TOKEN=" + attackerToken}}
	d := b.startDaemon(t)
	attacks := []attack{
		{label: "control", body: callBody(`{"name":"store","arguments":{"entity_type":"note","text":"hi"}}`), allowed: true},
		{label: "control with escapes", body: callBody(`{"name":"store","arguments":{"entity_type":"contact","text":"\u00e9 <&> \"q\" ; rm -rf /"}}`), allowed: true},
	}
	for _, a := range recorderAttacks {
		if strings.Contains(a.body, `"store"`) && !a.allowed && !a.envelope {
			attacks = append(attacks, a)
		}
	}
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			var p peer
			if transport == "http" {
				hp := newHTTPPeer(t, d.base+"/mcp/tags", attackerToken, initPlain)
				hp.log = d.logText
				p = hp
			} else {
				p = newStdioPeer(t, b, "tags", initPlain)
			}
			var n ids
			for _, a := range attacks {
				id := n.next()
				body := strings.ReplaceAll(a.body, "@ID@", id)
				if !strings.Contains(a.body, "@ID@") {
					id = ""
				}
				at := b.send(t, p, "tags", a.label, body, id)
				dec := at.decision(t)
				if !a.allowed {
					if dec.Decision != "deny" || len(at.outcomes) != 0 {
						t.Errorf("%s: %s with %d outcome events (%s), want one refusal and nothing run", a.label, dec.Decision, len(at.outcomes), dec.Reason)
					}
					continue
				}
				if dec.Decision != "allow" || len(at.outcomes) != 1 || *at.outcomes[0].Of != dec.Seq {
					t.Fatalf("%s: %s with outcomes %v (%s)", a.label, dec.Decision, at.outcomes, dec.Reason)
				}
				// What ran is what was decided: the argv holds the decided
				// values, and the digest is of the arguments sent.
				var sent struct {
					Params struct {
						Arguments map[string]any `json:"arguments"`
					} `json:"params"`
				}
				_ = json.Unmarshal([]byte(body), &sent)
				if digestJSON(sent.Params.Arguments) != dec.ArgsSHA256 {
					t.Errorf("%s: audited digest %s is not of the arguments sent %v", a.label, dec.ArgsSHA256, sent.Params.Arguments)
				}
				var ran struct {
					Argv []string `json:"argv"`
				}
				_ = json.Unmarshal([]byte(at.outcomes[0].raw), &ran)
				want := []string{argvEcho, sent.Params.Arguments["entity_type"].(string), sent.Params.Arguments["text"].(string)}
				if !slices.Equal(ran.Argv, want) {
					t.Errorf("%s: ran %q, decided %q", a.label, ran.Argv, want)
				}
				text, _ := at.reply.toolText()
				var out []string
				if json.Unmarshal([]byte(text), &out) != nil || !slices.Equal(out, want[1:]) {
					t.Errorf("%s: the command printed %q, want %q", a.label, text, want[1:])
				}
			}
		})
	}
}
