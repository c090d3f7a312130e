package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// serverLister enumerates the tools of the workspace's proxied MCP servers
// for `toolgate pin` and `toolgate check`: per server id, the pins of what
// it lists now; a server that cannot be enumerated is in errs instead.
type serverLister func(ctx context.Context, ws *workspace.Workspace) (tools map[string][]pin.Tool, errs map[string]error)

// liveServerLister connects to each server as the gateway does
// (gateway.ListServerTools: credentials, era, every page) and pins each
// tool it lists. A tool whose definition cannot be pinned (duplicate or
// case-variant keys) gets an empty digest, which pin reports as invalid.
func (c *cli) liveServerLister(ctx context.Context, ws *workspace.Workspace) (map[string][]pin.Tool, map[string]error) {
	raws, errs := gateway.ListServerTools(ctx, ws, c.getenv, c.log)
	out := make(map[string][]pin.Tool, len(raws))
	for id, list := range raws {
		out[id] = pinsOf(list)
	}
	return out, errs
}

// pinsOf pins each tool of one server's listing. A tool that cannot be
// pinned keeps its definition as listed (so a decision without a lock sees
// it as the gateway does) and has no digest (so no lock records it).
func pinsOf(list []json.RawMessage) []pin.Tool {
	tools := make([]pin.Tool, 0, len(list))
	for i, raw := range list {
		t, err := pin.DigestTool(raw)
		if err != nil {
			t.Digest, t.Definition = "", raw
			if t.Name == "" {
				t.Name = fmt.Sprintf("#%d", i)
			}
		}
		tools = append(tools, t)
	}
	return tools
}

// serverLister is the lister in force: the test's, or the live one.
func (c *cli) serverLister() serverLister {
	if c.listServerTools != nil {
		return c.listServerTools
	}
	return c.liveServerLister
}

// comparePins sets every declared surface's live tools (the packs' from
// the workspace; the servers' from the lister, when servers is set) against
// old: the report, the lock `pin --update` would write, and whether
// everything matches.
func (c *cli) comparePins(ctx context.Context, ws *workspace.Workspace, old *pin.Lock, lockPath string, servers bool) (pinReport, *pin.Lock, bool, error) {
	rep := pinReport{Lock: lockPath, Unavailable: map[string]string{}}
	live, err := pin.PackTools(ws)
	if err != nil {
		return rep, nil, false, err
	}
	var unavailable map[string]error
	if servers {
		var served map[string][]pin.Tool
		served, unavailable = c.serverLister()(ctx, ws)
		for id, tools := range served {
			live[id] = tools
		}
	} else {
		unavailable = map[string]error{}
		for _, s := range ws.MCPServers {
			unavailable[s.ID] = errors.New("not contacted (--offline)")
		}
	}
	next := pin.New()
	declared := map[string]bool{}
	for _, p := range ws.CommandPacks {
		declared[p.ID] = true
	}
	for _, s := range ws.MCPServers {
		declared[s.ID] = true
	}
	surfaces := make([]string, 0, len(declared))
	for s := range declared {
		surfaces = append(surfaces, s)
	}
	slices.Sort(surfaces)
	clean := true
	for _, s := range surfaces {
		if err, down := unavailable[s]; down {
			rep.Unavailable[s] = err.Error()
			if pins, ok := old.Surfaces[s]; ok { // keep what was reviewed
				next.Surfaces[s] = pins
			}
			continue
		}
		var keep []pin.Tool
		byName := make(map[string]pin.Tool, len(live[s]))
		for _, t := range live[s] {
			byName[t.Name] = t
		}
		for _, r := range old.Compare(s, live[s]) {
			res := pinResult{Surface: s, Tool: r.Tool, Status: string(r.Status), Pinned: string(r.Pinned), Live: string(r.Live)}
			if r.Status != pin.StatusPinned {
				clean = false
				res.Changes = definitionChanges(old, s, r, byName[r.Tool])
			}
			rep.Results = append(rep.Results, res)
			if r.Status != pin.StatusGone && r.Status != pin.StatusInvalid {
				keep = append(keep, byName[r.Tool])
			}
		}
		next.SetSurface(s, keep)
	}
	for s := range old.Surfaces {
		if !declared[s] {
			rep.Removed = append(rep.Removed, s)
			clean = false
		}
	}
	slices.Sort(rep.Removed)
	return rep, next, clean, nil
}

// definitionChanges is the field-level difference between the pinned and
// the live definition of one tool that is not pinned as it is; nil when
// either side is unknown (an unpinnable definition, a lock of version 1
// that recorded no definition: then only the digests are shown).
func definitionChanges(old *pin.Lock, surface string, r pin.Result, live pin.Tool) []pin.Change {
	pinned, known := old.Definition(surface, r.Tool)
	switch r.Status {
	case pin.StatusChanged:
		if !known || live.Definition == nil {
			return nil
		}
		return pin.Diff(pinned, live.Definition)
	case pin.StatusNew:
		return pin.Diff(nil, live.Definition)
	case pin.StatusGone:
		if known {
			return pin.Diff(pinned, nil)
		}
	}
	return nil
}

// pinReport is `pin --format json`.
type pinReport struct {
	Lock        string            `json:"lock"`
	Written     bool              `json:"written"`
	Results     []pinResult       `json:"results"`
	Unavailable map[string]string `json:"unavailable,omitempty"`
	Removed     []string          `json:"removed_surfaces,omitempty"`
}

type pinResult struct {
	Surface string `json:"surface"`
	Tool    string `json:"tool"`
	Status  string `json:"status"`
	Pinned  string `json:"pinned,omitempty"`
	Live    string `json:"live,omitempty"`
	// Changes are the fields that differ from the pinned definition.
	Changes []pin.Change `json:"changes,omitempty"`
}

const pinUsage = "pin [-w FILE] [--update | --diff] [--format text|json]"

func runPin(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("pin", pinUsage)
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	update := fs.Bool("update", false, "record the live definitions as reviewed: rewrite toolgate.lock")
	diffOnly := fs.Bool("diff", false, "print what differs from toolgate.lock, field by field, and write nothing (exit 1 when anything differs)")
	format := fs.String("format", "text", "output format: text or json")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.stderr, "toolgate pin: unexpected argument %q (the workspace is given with -w FILE)\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(c.stderr, "toolgate pin: --format %q: use text or json\n", *format)
		return exitUsage
	}
	if *update && *diffOnly {
		fmt.Fprintf(c.stderr, "toolgate pin: --diff writes nothing and --update rewrites the lock; give one of them\n")
		return exitUsage
	}
	ws, err := workspace.Load(c.workspacePath(*wsFlag))
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	lockPath := pin.PathFor(ws.Path)
	old, err := pin.Read(lockPath)
	first := errors.Is(err, os.ErrNotExist)
	if err != nil && !first {
		fmt.Fprintf(c.stderr, "toolgate pin: %v\n(fix the file, or delete it and run `toolgate pin` to pin anew)\n", err)
		return exitFail
	}
	if first {
		old = pin.New()
	}

	rep, next, clean, err := c.comparePins(ctx, ws, old, lockPath, true)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate pin: %v\n", err)
		return exitFail
	}

	if (first || *update) && !*diffOnly {
		if err := pin.Write(lockPath, next); err != nil {
			fmt.Fprintf(c.stderr, "toolgate pin: %v\n", err)
			return exitFail
		}
		rep.Written = true
	}
	code := exitOK
	if !clean && !rep.Written {
		code = exitFail
	}
	if *format == "json" {
		if rep.Results == nil {
			rep.Results = []pinResult{}
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(c.stderr, "toolgate pin: %v\n", err)
			return exitFail
		}
		return code
	}
	printPinReport(c, rep, first && !*diffOnly, code)
	if !first && old.Format < pin.Version && !rep.Written {
		fmt.Fprintf(c.stdout, "%s records digests only (an older format): its pins hold, but `check`, `explain` and `policy test --offline` need the definitions; run `toolgate pin --update` to record them\n", lockPath)
	}
	return code
}

func printPinReport(c *cli, rep pinReport, first bool, code int) {
	counts := map[string]int{}
	for _, r := range rep.Results {
		counts[r.Status]++
		switch pin.Status(r.Status) {
		case pin.StatusPinned:
			continue
		case pin.StatusChanged:
			fmt.Fprintf(c.stdout, "  changed  %s:%s  %s -> %s\n", r.Surface, r.Tool, short(r.Pinned), short(r.Live))
			if r.Changes == nil {
				fmt.Fprintf(c.stdout, "             (the lock records no definition to compare with: it predates definitions; `toolgate pin --update` records them)\n")
			}
		case pin.StatusNew:
			fmt.Fprintf(c.stdout, "  new      %s:%s  %s\n", r.Surface, r.Tool, short(r.Live))
		case pin.StatusGone:
			fmt.Fprintf(c.stdout, "  gone     %s:%s  (was %s)\n", r.Surface, r.Tool, short(r.Pinned))
		case pin.StatusInvalid:
			fmt.Fprintf(c.stdout, "  invalid  %s:%s  (its definition cannot be pinned: duplicate or case-variant keys, or listed twice)\n", r.Surface, r.Tool)
		}
		if !first {
			for _, ch := range r.Changes {
				fmt.Fprintf(c.stdout, "             %s\n", ch)
			}
		}
	}
	for _, s := range rep.Removed {
		fmt.Fprintf(c.stdout, "  removed  %s  (no longer in the workspace)\n", s)
	}
	for _, s := range slices.Sorted(maps.Keys(rep.Unavailable)) {
		fmt.Fprintf(c.stdout, "  skipped  %s  not enumerated: %s (its pins are kept)\n", s, rep.Unavailable[s])
	}
	summary := fmt.Sprintf("%d pinned", counts[string(pin.StatusPinned)])
	for _, st := range []pin.Status{pin.StatusChanged, pin.StatusNew, pin.StatusGone, pin.StatusInvalid} {
		if n := counts[string(st)]; n > 0 {
			summary += fmt.Sprintf(", %d %s", n, st)
		}
	}
	switch {
	case first:
		fmt.Fprintf(c.stdout, "%s: wrote %d tool pins\n", rep.Lock, counts[string(pin.StatusNew)])
	case rep.Written:
		fmt.Fprintf(c.stdout, "%s: updated (%s)\n", rep.Lock, summary)
	case code != exitOK:
		fmt.Fprintf(c.stdout, "%s: %s — tools not pinned are hidden and refused; review the changes, then run `toolgate pin --update`\n", rep.Lock, summary)
	default:
		fmt.Fprintf(c.stdout, "%s: ok (%s)\n", rep.Lock, summary)
	}
}

// short abbreviates a digest for people: sha256:0123456789ab….
func short(d string) string {
	if h, ok := strings.CutPrefix(d, "sha256:"); ok && len(h) > 12 {
		return "sha256:" + h[:12] + "…"
	}
	return d
}
