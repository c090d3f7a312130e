package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/bundled"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// packView is one bundled pack as `toolgate packs` reports it.
type packView struct {
	ID          string            `json:"id"`
	Description string            `json:"description"`
	Commands    []packCommandView `json:"commands"`
	Requires    []requireView     `json:"requires"`
	// Available is true when every required binary is on PATH here at a
	// satisfying version; Problems says what is missing otherwise.
	Available bool     `json:"available"`
	Problems  []string `json:"problems,omitempty"`
	// Credentials are the workspace credentials the pack's env names.
	Credentials []string `json:"credentials,omitempty"`
	Permission  string   `json:"permission"`
	TimeoutMS   int64    `json:"timeout_ms"`
	MaxOutput   int64    `json:"max_output"`
}

type packCommandView struct {
	ID          string           `json:"id"`
	Effects     workspace.Effect `json:"effects"`
	Scopes      []string         `json:"scopes,omitempty"`
	Background  bool             `json:"background,omitempty"`
	Description string           `json:"description,omitempty"`
	Argv        []string         `json:"argv,omitempty"`
	Inputs      map[string]any   `json:"inputs,omitempty"`
	TimeoutMS   int64            `json:"timeout_ms,omitempty"`
}

type requireView struct {
	Binary  string `json:"binary"`
	Version string `json:"version,omitempty"`
}

func runPacks(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("packs", "packs list [--format text|json] | packs show ID [--format text|json]")
	format := fs.String("format", "text", "output format: text or json")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(c.stderr, "toolgate packs: --format %q: use text or json\n", *format)
		return exitUsage
	}
	rest := fs.Args()
	switch {
	case len(rest) == 1 && rest[0] == "list":
		var views []packView
		for _, id := range bundled.IDs() {
			v, err := viewBundled(ctx, id)
			if err != nil {
				fmt.Fprintf(c.stderr, "toolgate packs: %v\n", err)
				return exitFail
			}
			views = append(views, v)
		}
		if *format == "json" {
			return c.writeJSON(views)
		}
		printPackList(c, views)
		return exitOK
	case len(rest) == 2 && rest[0] == "show":
		v, err := viewBundled(ctx, rest[1])
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate packs show: %v\n", err)
			return exitFail
		}
		if *format == "json" {
			return c.writeJSON(v)
		}
		printPack(c, v)
		return exitOK
	}
	fmt.Fprintf(c.stderr, "toolgate packs: want `list` or `show ID`, got %q\n", strings.Join(rest, " "))
	fs.Usage()
	return exitUsage
}

func (c *cli) writeJSON(v any) int {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(c.stderr, "toolgate packs: %v\n", err)
		return exitFail
	}
	return exitOK
}

// viewBundled loads bundled pack id through the real loader, as a
// workspace declaring it would, and checks its requires on this machine.
func viewBundled(ctx context.Context, id string) (packView, error) {
	if _, _, err := bundled.Source(id); err != nil {
		return packView{}, err
	}
	var src strings.Builder
	src.WriteString("version: 1\n")
	names := credentialNames(id)
	if len(names) > 0 {
		src.WriteString("credentials:\n")
		for _, n := range names {
			fmt.Fprintf(&src, "  %s: {env: TOOLGATE_PACKS_UNUSED}\n", n)
		}
	}
	fmt.Fprintf(&src, "command_packs:\n  - use: bundled/%s\n", id)
	ws, err := workspace.Parse("toolgate.yaml", []byte(src.String()))
	if err != nil {
		return packView{}, fmt.Errorf("bundled pack %s does not load: %w", id, err)
	}
	p := ws.CommandPacks[0]
	v := packView{
		ID: p.ID, Description: p.Description, Available: true, Credentials: names,
		Permission: string(p.Permission), TimeoutMS: packs.DefaultTimeout.Milliseconds(), MaxOutput: packs.DefaultMaxOutput,
	}
	if v.Permission == "" {
		v.Permission = string(workspace.TierCautious)
	}
	if p.Timeout > 0 {
		v.TimeoutMS = p.Timeout.D().Milliseconds()
	}
	if p.MaxOutput > 0 {
		v.MaxOutput = int64(p.MaxOutput)
	}
	for _, r := range p.Requires {
		v.Requires = append(v.Requires, requireView{Binary: r.Binary, Version: r.Version})
	}
	probe, cancel := context.WithTimeout(ctx, 2*packs.VersionProbeTimeout)
	defer cancel()
	for _, e := range packs.CheckRequires(probe, ws) {
		v.Available = false
		v.Problems = append(v.Problems, e.Msg)
	}
	for _, cmd := range p.Commands {
		cv := packCommandView{
			ID: cmd.ID, Effects: cmd.Effects, Scopes: cmd.Scopes, Background: cmd.Background,
			Description: cmd.Description, Argv: cmd.Argv, Inputs: cmd.Inputs,
		}
		if cmd.Effects == "" {
			cv.Effects = workspace.EffectWrite
		}
		if d, ok := p.TimeoutOverrides[cmd.ID]; ok && d > 0 {
			cv.TimeoutMS = d.D().Milliseconds()
		}
		v.Commands = append(v.Commands, cv)
	}
	return v, nil
}

// credentialNames lists the {credential.NAME} references in a bundled
// pack's env and credentials_ref, read from the raw YAML before loading
// (the loader needs them declared).
func credentialNames(id string) []string {
	_, data, err := bundled.Source(id)
	if err != nil {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	text := string(data)
	for {
		i := strings.Index(text, "{"+workspace.CredentialPrefix)
		if i < 0 {
			break
		}
		text = text[i+1+len(workspace.CredentialPrefix):]
		end := strings.IndexByte(text, '}')
		if end < 0 {
			break
		}
		if n := text[:end]; !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}

func printPackList(c *cli, views []packView) {
	tw := tabwriter.NewWriter(c.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACK\tAVAILABLE\tREQUIRES\tCOMMANDS (r = read, w = write, & = background)")
	for _, v := range views {
		var reqs, cmds []string
		for _, r := range v.Requires {
			reqs = append(reqs, strings.TrimSpace(r.Binary+" "+r.Version))
		}
		for _, cmd := range v.Commands {
			mark := string(cmd.Effects[0])
			if cmd.Background {
				mark += "&"
			}
			cmds = append(cmds, cmd.ID+"("+mark+")")
		}
		avail := "yes"
		if !v.Available {
			avail = "no"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.ID, avail, strings.Join(reqs, ", "), strings.Join(cmds, " "))
	}
	tw.Flush()
	fmt.Fprintln(c.stdout, "\nDeclare one with `use: bundled/<pack>` under command_packs; `toolgate packs show <pack>` details it.")
}

func printPack(c *cli, v packView) {
	fmt.Fprintf(c.stdout, "%s: %s\n\n", v.ID, v.Description)
	for _, r := range v.Requires {
		fmt.Fprintf(c.stdout, "requires:   %s\n", strings.TrimSpace(r.Binary+" "+r.Version))
	}
	if v.Available {
		fmt.Fprintln(c.stdout, "available:  yes")
	} else {
		fmt.Fprintln(c.stdout, "available:  no")
		for _, p := range v.Problems {
			fmt.Fprintf(c.stdout, "            %s\n", p)
		}
	}
	if len(v.Credentials) > 0 {
		fmt.Fprintf(c.stdout, "credentials: %s (declare under credentials:)\n", strings.Join(v.Credentials, ", "))
	}
	fmt.Fprintf(c.stdout, "permission: %s\ntimeout:    %s\nmax_output: %d bytes\n", v.Permission, time.Duration(v.TimeoutMS)*time.Millisecond, v.MaxOutput)
	for _, cmd := range v.Commands {
		fmt.Fprintf(c.stdout, "\n%s  [%s", cmd.ID, cmd.Effects)
		if len(cmd.Scopes) > 0 {
			fmt.Fprintf(c.stdout, "; scopes %s", strings.Join(cmd.Scopes, ", "))
		}
		if cmd.Background {
			fmt.Fprint(c.stdout, "; background")
		}
		if cmd.TimeoutMS > 0 {
			fmt.Fprintf(c.stdout, "; timeout %s", time.Duration(cmd.TimeoutMS)*time.Millisecond)
		}
		fmt.Fprintln(c.stdout, "]")
		fmt.Fprintf(c.stdout, "  %s\n", cmd.Description)
		fmt.Fprintf(c.stdout, "  argv: %s\n", strings.Join(cmd.Argv, " "))
		if props, ok := cmd.Inputs["properties"].(map[string]any); ok && len(props) > 0 {
			required := map[string]bool{}
			switch req := cmd.Inputs["required"].(type) {
			case []any:
				for _, r := range req {
					required[fmt.Sprint(r)] = true
				}
			case []string:
				for _, r := range req {
					required[r] = true
				}
			}
			var params []string
			for name := range props {
				if required[name] {
					name += "*"
				}
				params = append(params, name)
			}
			slices.Sort(params)
			note := ""
			if len(required) > 0 {
				note = " (* required)"
			}
			fmt.Fprintf(c.stdout, "  inputs: %s%s\n", strings.Join(params, ", "), note)
		}
	}
}
