package bundled_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/bundled"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// packWorkspace declares bundled pack id in a minimal workspace, with the
// credential the gh pack's env names.
func packWorkspace(id string) string {
	return "version: 1\ncredentials:\n  gh-token: {env: GH_TOKEN}\ncommand_packs:\n  - use: bundled/" + id + "\n"
}

func loadPack(t *testing.T, id string) *workspace.CommandPack {
	t.Helper()
	ws, err := workspace.Parse("toolgate.yaml", []byte(packWorkspace(id)))
	if err != nil {
		t.Fatalf("use: bundled/%s does not load:\n%v", id, err)
	}
	return ws.CommandPacks[0]
}

// TestBundledEffects pins every bundled command and its effects: a pack
// grant hands out every read, so a command that changes anything must never
// drift to read.
func TestBundledEffects(t *testing.T) {
	t.Parallel()
	r, w := workspace.EffectRead, workspace.EffectWrite
	want := map[string]map[string]workspace.Effect{
		"json-tools": {"query": r, "keys": r, "validate": r, "edit-in-place": w},
		"git": {"status": r, "log": r, "diff": r, "diff-staged": r, "show": r, "blame": r, "branch-list": r,
			"add": w, "commit": w},
		"ripgrep":               {"search": r, "search-fixed": r, "count": r, "files": r},
		"gh":                    {"pr-list": r, "pr-view": r, "issue-list": r, "issue-view": r},
		"coding-agent-claude":   {"run": w, "start": w},
		"coding-agent-codex":    {"run": w, "start": w},
		"coding-agent-opencode": {"run": w, "start": w},
	}
	ids := bundled.IDs()
	if len(ids) != len(want) {
		t.Errorf("bundled packs = %q, want the %d pinned here", ids, len(want))
	}
	for _, id := range ids {
		cmds, ok := want[id]
		if !ok {
			t.Errorf("bundled pack %s has no pinned effects here; add it to this table", id)
			continue
		}
		got := map[string]workspace.Effect{}
		for _, c := range loadPack(t, id).Commands {
			got[c.ID] = c.Effects
		}
		if fmt.Sprint(got) != fmt.Sprint(cmds) {
			t.Errorf("%s effects = %v, want %v", id, got, cmds)
		}
	}
}

// TestBundledDeclarations checks what every bundled pack must carry:
// requires, and (json-tools excepted, see below) scopes on every command;
// closed, bounded input schemas; and for coding agents a foreground and a
// background form with declared time bounds.
func TestBundledDeclarations(t *testing.T) {
	t.Parallel()
	for _, id := range bundled.IDs() {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			p := loadPack(t, id)
			if len(p.Requires) == 0 {
				t.Errorf("pack declares no requires; name the binary it runs")
			}
			for _, req := range p.Requires {
				if req.Binary == "" {
					t.Errorf("a requires entry names no binary")
				}
			}
			for _, c := range p.Commands {
				// json-tools predates scopes and workspaces grant it to
				// agents without any; adding one would lock them out.
				if id != "json-tools" && len(c.Scopes) == 0 {
					t.Errorf("%s declares no scopes", c.ID)
				}
				if c.Inputs["additionalProperties"] != false {
					t.Errorf("%s: inputs must set additionalProperties: false", c.ID)
				}
				props, _ := c.Inputs["properties"].(map[string]any)
				for name, raw := range props {
					prop, _ := raw.(map[string]any)
					if msg := unbounded(prop); msg != "" && id != "json-tools" {
						t.Errorf("%s.%s: %s", c.ID, name, msg)
					}
					if prop["description"] == nil {
						t.Errorf("%s.%s has no description", c.ID, name)
					}
				}
			}
			if strings.HasPrefix(id, "coding-agent-") {
				var fg, bg int
				for _, c := range p.Commands {
					if c.Background {
						bg++
					} else {
						fg++
					}
				}
				if fg != 1 || bg != 1 || p.Timeout == 0 || p.TimeoutOverrides["start"] == 0 || p.MaxOutput == 0 {
					t.Errorf("coding agent pack: %d foreground, %d background commands, timeout %v, start timeout %v, max_output %d; want one of each, all bounds declared",
						fg, bg, p.Timeout, p.TimeoutOverrides["start"], p.MaxOutput)
				}
			}
		})
	}
}

// unbounded says what bound a property schema lacks, or "".
func unbounded(prop map[string]any) string {
	switch prop["type"] {
	case "string":
		if prop["maxLength"] == nil && prop["enum"] == nil {
			return "string without maxLength or enum"
		}
	case "integer", "number":
		if prop["minimum"] == nil || prop["maximum"] == nil {
			return "number without minimum and maximum"
		}
	case "array":
		items, _ := prop["items"].(map[string]any)
		if prop["maxItems"] == nil {
			return "array without maxItems"
		}
		return unbounded(items)
	}
	return ""
}

// TestDashSafeSchemas checks that every placeholder standing alone before a
// literal "--" is declared so that a value starting with "-" fails schema
// validation (a pattern refusing a leading "-", an enum, or a non-negative
// number). The runner refuses such values anyway; the schema tells the
// model before it tries.
func TestDashSafeSchemas(t *testing.T) {
	t.Parallel()
	for _, id := range bundled.IDs() {
		for _, c := range loadPack(t, id).Commands {
			props, _ := c.Inputs["properties"].(map[string]any)
			for _, elem := range c.Argv {
				if elem == "--" {
					break
				}
				segs := workspace.ParseTemplate(elem)
				if len(segs) != 1 || segs[0].Param == "" {
					continue
				}
				prop, _ := props[segs[0].Param].(map[string]any)
				if !dashSafe(prop) && id != "json-tools" {
					t.Errorf("%s:%s parameter %s stands alone before \"--\" but its schema admits a leading \"-\"; add pattern '^[^-]…', an enum or minimum: 0",
						id, c.ID, segs[0].Param)
				}
			}
		}
	}
}

func dashSafe(prop map[string]any) bool {
	if prop["enum"] != nil {
		return true
	}
	if min, err := strconv.ParseFloat(fmt.Sprint(prop["minimum"]), 64); err == nil && min >= 0 {
		return true
	}
	if p, ok := prop["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		return err == nil && strings.HasPrefix(p, "^") && !re.MatchString("-") && !re.MatchString("-x") && !re.MatchString("--output=x")
	}
	return false
}

// forbidden are argv literals and enum values that would let a governed
// tool install, authenticate, publish or escape its vendor's permission
// checks. None may appear in a bundled pack.
var forbidden = []string{
	"push", "publish", "release", "login", "logout", "auth", "install", "upgrade", "update",
	"merge", "create", "delete", "edit", "comment", "close", "reopen", "fetch", "pull", "clone",
	"--dangerously-skip-permissions", "bypassPermissions", "danger-full-access", "--full-auto",
	"--yolo", "--dangerously-bypass-approvals-and-sandbox", "--force", "-f",
}

func TestNoPublicationOrEscalation(t *testing.T) {
	t.Parallel()
	for _, id := range bundled.IDs() {
		if id == "json-tools" {
			continue
		}
		for _, c := range loadPack(t, id).Commands {
			for _, elem := range c.Argv {
				if slices.Contains(forbidden, elem) {
					t.Errorf("%s:%s argv offers %q", id, c.ID, elem)
				}
			}
			props, _ := c.Inputs["properties"].(map[string]any)
			for name, raw := range props {
				prop, _ := raw.(map[string]any)
				enum, _ := prop["enum"].([]any)
				for _, v := range enum {
					if s, _ := v.(string); slices.Contains(forbidden, s) {
						t.Errorf("%s:%s parameter %s offers %q", id, c.ID, name, s)
					}
				}
			}
		}
	}
}

// TestInertUntilUsed checks that packs whose binaries are missing here do
// not stop a workspace that does not declare them from passing requires.
// It changes PATH, so it does not run in parallel.
func TestInertUntilUsed(t *testing.T) {
	ws, err := workspace.Parse("toolgate.yaml", []byte("version: 1\ncommand_packs:\n  - id: local\n    commands:\n      - {id: hi, description: say hi, argv: [go, version], inputs: {type: object}, effects: read}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := packs.CheckRequires(context.Background(), ws); len(errs) > 0 {
		t.Fatalf("requires of bundled packs leaked into a workspace that does not use them: %v", errs)
	}
	ws, err = workspace.Parse("toolgate.yaml", []byte(packWorkspace("coding-agent-opencode")))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if errs := packs.CheckRequires(context.Background(), ws); len(errs) != 1 || !strings.Contains(errs[0].Error(), "opencode") {
		t.Errorf("declaring coding-agent-opencode with no opencode on PATH: errors %v, want one naming opencode", errs)
	}
}
