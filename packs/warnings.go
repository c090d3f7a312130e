package packs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/workspace"
)

// Warning is a risk in a workspace that loads: not an error, something an
// operator should change. Pos is where to change it.
type Warning struct {
	Pos workspace.Pos `json:"pos"`
	Msg string        `json:"message"`
}

func (w Warning) String() string { return w.Pos.String() + ": warning: " + w.Msg }

// CredentialProgramWarnings lists every command that receives a credential
// in its environment and also takes program text an agent writes
// (program:): the program can print the credential transformed in ways no
// redaction recognises (docs/security.md), so the two should not meet. The
// warning points at the env entry that hands the credential over.
func CredentialProgramWarnings(ws *workspace.Workspace) []Warning {
	var out []Warning
	for _, p := range ws.CommandPacks {
		creds := packCredentials(p)
		if len(creds) == 0 {
			continue
		}
		for _, c := range p.Commands {
			if len(c.Program) == 0 {
				continue
			}
			for _, ce := range creds {
				where := c.Pos
				if len(c.ProgramPos) > 0 {
					where = c.ProgramPos[0]
				}
				pos := p.KeyPos["env."+ce.envKey]
				if pos.Line == 0 {
					pos = p.Pos
				}
				out = append(out, Warning{Pos: pos, Msg: fmt.Sprintf(
					"command %s:%s takes agent-written program text (program: %s, declared at %s) and receives credential %q in its environment (env %s): the program can print the credential in a form redaction does not recognise; move the credential to a pack whose commands take no program text, or drop the program parameter from this pack",
					p.ID, c.ID, strings.Join(c.Program, ", "), where, ce.name, ce.envKey)})
			}
		}
	}
	return out
}

type envCredential struct{ envKey, name string }

// packCredentials lists the credentials a pack's env hands its commands.
func packCredentials(p *workspace.CommandPack) []envCredential {
	var out []envCredential
	for k, tmpl := range p.Env {
		for _, seg := range workspace.ParseTemplate(tmpl) {
			if name, ok := seg.IsCredential(); ok {
				out = append(out, envCredential{envKey: k, name: name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].envKey+out[i].name < out[j].envKey+out[j].name })
	return out
}
