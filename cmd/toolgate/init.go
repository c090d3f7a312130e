package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

const initUsage = "init --server ID [--agent ID] [-w FILE] [--force] (--url URL | [--env KEY=VALUE]... -- COMMAND [ARGS...])"

// initServer is the server `toolgate init` was pointed at.
type initServer struct {
	id      string
	url     string
	command []string
	env     [][2]string // in the order given
}

// proposal is the effect proposed for one listed tool, and why.
type proposal struct {
	tool   string
	effect workspace.Effect
	why    string
}

// runInit writes a first workspace from a live server: the server entry
// with an effect proposed for each tool it lists, an agent granted the
// reads, and the lock of the listed definitions.
func runInit(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("init", initUsage)
	wsFlag := fs.StringP("workspace", "w", "", "the workspace file to write (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	id := fs.String("server", "", "the server's surface id (letters, digits, '_', '.', '-')")
	url := fs.String("url", "", "the endpoint of a streamable HTTP server")
	agent := fs.String("agent", "agent", "the id of the agent granted the server's reads")
	env := fs.StringArray("env", nil, "KEY=VALUE for a stdio server's environment (repeatable; secrets go under credentials: afterwards)")
	force := fs.Bool("force", false, "replace an existing workspace file and lock")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	srv, err := initTarget(*id, *url, *env, fs.Args(), fs.ArgsLenAtDash())
	if err == nil && !workspace.IDPattern.MatchString(*agent) {
		err = fmt.Errorf("--agent %q may only use letters, digits, '_', '.' and '-'", *agent)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate init: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	path := c.workspacePath(*wsFlag)
	lockPath := pin.PathFor(path)
	if !*force {
		for _, p := range []string{path, lockPath} {
			if _, err := os.Lstat(p); err == nil {
				fmt.Fprintf(c.stderr, "toolgate init: %s already exists; pass --force to replace it, or -w FILE to write elsewhere\n", p)
				return exitFail
			}
		}
	}
	if err := c.initWorkspace(ctx, srv, *agent, path, lockPath, *force); err != nil {
		fmt.Fprintf(c.stderr, "toolgate init: %v\n", err)
		return exitFail
	}
	return exitOK
}

// initTarget reads the server from the flags and the words after "--".
func initTarget(id, url string, env, rest []string, atDash int) (initServer, error) {
	srv := initServer{id: id, url: url}
	if atDash > 0 || (atDash < 0 && len(rest) > 0) {
		return srv, fmt.Errorf("unexpected argument %q; put a stdio server's command after --", rest[0])
	}
	srv.command = rest
	switch {
	case id == "":
		return srv, errors.New("--server ID is required: the surface id the server's tools are granted under")
	case !workspace.IDPattern.MatchString(id):
		return srv, fmt.Errorf("--server %q may only use letters, digits, '_', '.' and '-'", id)
	case url == "" && len(rest) == 0:
		return srv, errors.New("give the server: --url URL (streamable HTTP) or -- COMMAND [ARGS...] (stdio)")
	case url != "" && len(rest) > 0:
		return srv, errors.New("give --url or a command after --, not both")
	case url != "" && len(env) > 0:
		return srv, errors.New("--env is for a stdio server's command")
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return srv, fmt.Errorf("--env %q: write KEY=VALUE", kv)
		}
		if strings.Contains(v, "{"+workspace.CredentialPrefix) {
			return srv, fmt.Errorf("--env %s: a {credential.*} reference needs a declared credential; add it to the written workspace by hand", k)
		}
		srv.env = append(srv.env, [2]string{k, v})
	}
	return srv, nil
}

// initWorkspace lists the server's tools, writes the workspace proposed
// from them, and pins what was listed as `toolgate pin` does.
func (c *cli) initWorkspace(ctx context.Context, srv initServer, agent, path, lockPath string, force bool) error {
	// The server is reached as the written workspace will reach it (its
	// directory is a stdio server's working directory).
	draft, err := workspace.Parse(path, renderWorkspace(srv, nil, agent))
	if err != nil {
		return fmt.Errorf("the server's declaration does not load:\n%v", err)
	}
	listed, errs := gateway.ListServerTools(ctx, draft, c.getenv, c.log)
	if err := errs[srv.id]; err != nil {
		return fmt.Errorf("list the tools of server %q: %v\n(check that the server starts and answers MCP; toolgate reaches it as `toolgate serve` will)", srv.id, err)
	}
	props, err := propose(srv.id, listed[srv.id])
	if err != nil {
		return err
	}
	text := renderWorkspace(srv, props, agent)
	if _, err := workspace.Parse(path, text); err != nil {
		return fmt.Errorf("the workspace written from server %q does not load (please report this):\n%v", srv.id, err)
	}
	if err := writeNew(path, text, force); err != nil {
		return err
	}
	ws, err := workspace.Load(path)
	if err != nil {
		return err
	}
	// Pin exactly the listing the effects were proposed from, through the
	// code `toolgate pin` writes a first lock with.
	pinner := *c
	pinner.listServerTools = func(context.Context, *workspace.Workspace) (map[string][]pin.Tool, map[string]error) {
		return map[string][]pin.Tool{srv.id: pinsOf(listed[srv.id])}, nil
	}
	_, lock, _, err := pinner.comparePins(ctx, ws, pin.New(), lockPath, true)
	if err != nil {
		return err
	}
	if err := pin.Write(lockPath, lock); err != nil {
		return err
	}
	reads := 0
	for _, p := range props {
		if p.effect == workspace.EffectRead {
			reads++
		}
	}
	fmt.Fprintf(c.stdout, "%s: server %q lists %d tools, %d proposed read and %d write; agent %q is granted the reads\n", path, srv.id, len(props), reads, len(props)-reads, agent)
	fmt.Fprintf(c.stdout, "%s: wrote %d tool pins\n", lockPath, len(lock.Surfaces[srv.id]))
	fmt.Fprintf(c.stdout, "Review each effect in %s (a comment names the annotation it came from), then run `toolgate check`.\n", path)
	return nil
}

// propose gives each listed tool an effect: read where the server says
// readOnlyHint: true, write otherwise — undeclared is a write. The listing
// is the server's word, not to be trusted: only a name every grant can
// spell is written into the workspace (ValidName), so that nothing a
// server sends can add YAML of its own.
func propose(server string, listed []json.RawMessage) ([]proposal, error) {
	out := make([]proposal, 0, len(listed))
	seen := map[string]bool{}
	for i, raw := range listed {
		t, ok := grantcheck.ParseToolInfo(raw)
		switch {
		case !ok:
			return nil, fmt.Errorf("server %q lists a tool (#%d) that is not a tool definition (no name, or annotations of the wrong type); toolgate cannot serve it", server, i)
		case !grantcheck.ValidName(t.Name):
			return nil, fmt.Errorf("server %q lists a tool named %q, which no grant can name (letters, digits, '_', '.', '-'); toolgate cannot serve this server", server, t.Name)
		case seen[t.Name]:
			return nil, fmt.Errorf("server %q lists tool %q twice; toolgate cannot serve this server", server, t.Name)
		}
		seen[t.Name] = true
		p := proposal{tool: t.Name, effect: workspace.EffectWrite}
		switch {
		case t.ReadOnlyHint == nil:
			p.why = "review: no annotations.readOnlyHint, so a write"
		case *t.ReadOnlyHint:
			p.effect, p.why = workspace.EffectRead, "review: annotations.readOnlyHint is true"
		default:
			p.why = "review: annotations.readOnlyHint is false"
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b proposal) int { return strings.Compare(a.tool, b.tool) })
	return out, nil
}

// renderWorkspace is the workspace text, commented for the review the
// proposals need. Every value goes through yamlScalar.
func renderWorkspace(srv initServer, props []proposal, agent string) []byte {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# A toolgate workspace written by `toolgate init` from the tools server %q", srv.id)
	w("# listed. The effect of each tool is a proposal from its annotations:")
	w("# review every one, since a read runs without an approval. Reference:")
	w("# docs/workspace.md; `toolgate check` validates this file.")
	w("version: %d", workspace.FormatVersion)
	w("mcp_servers:")
	w("  - id: %s", yamlScalar(srv.id))
	if srv.url != "" {
		w("    url: %s", yamlScalar(srv.url))
	} else {
		quoted := make([]string, len(srv.command))
		for i, a := range srv.command {
			quoted[i] = yamlScalar(a)
		}
		w("    command: [%s]", strings.Join(quoted, ", "))
	}
	if len(srv.env) > 0 {
		w("    env:")
		for _, kv := range srv.env {
			w("      %s: %s", yamlScalar(kv[0]), yamlScalar(kv[1]))
		}
	}
	w("    permission: cautious # reads run; writes wait for an operator's approval")
	if len(props) > 0 {
		w("    effects:")
		for _, p := range props {
			w("      %s: %s # %s", yamlScalar(p.tool), p.effect, p.why)
		}
	}
	w("agents:")
	w("  - id: %s", yamlScalar(agent))
	var reads, writes []string
	for _, p := range props {
		c := yamlScalar("tool:" + srv.id + ":" + p.tool)
		if p.effect == workspace.EffectRead {
			reads = append(reads, c)
		} else {
			writes = append(writes, c)
		}
	}
	w("    # The tools proposed read, named one by one (server:%s would grant", srv.id)
	w("    # every tool it lists, writes too).")
	if len(reads) == 0 {
		w("    grants: []")
	} else {
		w("    grants:")
		for _, r := range reads {
			w("      - %s", r)
		}
	}
	if len(writes) > 0 {
		w("    # Writes are not granted. Grant one after review by adding it above:")
		for _, x := range writes {
			w("    #   - %s", x)
		}
	}
	return []byte(b.String())
}

// plainRE is text that YAML may hold unquoted in any position.
// It is compiled when first needed, not in every process's initialisers.
var plainRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_./=+@-]*(:[A-Za-z0-9_./=+@-]+)*$`)
})

// yamlScalar writes s as a YAML scalar that reads back as the string s:
// plain when that is unambiguous, else double-quoted (a JSON string is a
// valid YAML double-quoted scalar).
func yamlScalar(s string) string {
	if plainRE().MatchString(s) {
		var back any
		if yaml.Unmarshal([]byte(s), &back) == nil && back == s {
			return s
		}
	}
	q, _ := json.Marshal(s)
	return string(q)
}

// writeNew writes a file, refusing to replace one unless force.
func writeNew(path string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s already exists; pass --force to replace it, or -w FILE to write elsewhere", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
