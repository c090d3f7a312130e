package docs_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// TestPacksWorkedExample prepares each call of the ```text calls block of
// packs.md against the worked example's workspace, with the files it names,
// and checks that the decision and the command line are the ones the page
// shows: "AGENT → SURFACE:MEMBER ARGS" lines, each followed by the argv
// (elements holding a space or a quote in double quotes), "> FILE" for a
// write_to, and "held for approval, then " before a call that waits.
func TestPacksWorkedExample(t *testing.T) {
	data, err := os.ReadFile("packs.md")
	if err != nil {
		t.Fatal(err)
	}
	exs, problems := fences("packs.md", data)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var wsText string
	for _, ex := range exs {
		if ex.kind == kindWhole && strings.Contains(ex.text, "\n  - id: shop\n") {
			wsText = ex.text
		}
	}
	calls := block(string(data), "```text calls")
	if wsText == "" || calls == "" {
		t.Fatal("packs.md has no worked example (a workspace declaring pack shop, and a ```text calls block)")
	}
	dir := t.TempDir()
	for _, f := range []string{"data/shop.db", "reports/items.csv"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, problems := loadWhole(dir, "packs.md", wsText)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	ws, policy := c.ws, c.snap.Policy
	runner := packs.NewRunner(nil, os.Getenv)
	defer runner.Close()
	runner.BaseDir = dir
	checked := 0
	sc := bufio.NewScanner(strings.NewReader(calls))
	for sc.Scan() {
		head := sc.Text()
		if !sc.Scan() {
			t.Fatalf("call %q has no command line under it", head)
		}
		want := strings.TrimSpace(sc.Text())
		agent, rest, _ := strings.Cut(head, " → ")
		tool, argsJSON, _ := strings.Cut(strings.TrimSpace(rest), " ")
		surface, member, _ := strings.Cut(tool, ":")
		var args map[string]any
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
			t.Fatalf("call %q: arguments: %v", head, err)
		}
		d := policy.Decide(agent, surface, member, args)
		prefix := ""
		switch d.Outcome {
		case grantcheck.Approval:
			prefix = "held for approval, then "
		case grantcheck.Deny:
			t.Errorf("call %q is refused: %s", head, d.Reason)
			continue
		}
		pack, cmd := command(ws, surface, member)
		inv, err := runner.PrepareBound(pack, cmd, args, policy.PathRoots(agent, surface, member))
		if err != nil {
			t.Errorf("call %q is refused at Prepare: %v", head, err)
			continue
		}
		got := prefix + shown(inv.Argv)
		if inv.WriteTo != "" {
			rel, _ := filepath.Rel(dir, inv.WriteTo)
			got += " > " + rel
		}
		if got != want {
			t.Errorf("call %q:\n the page shows %s\n toolgate runs  %s", head, want, got)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("only %d calls checked", checked)
	}
}

// block returns the body of the fenced block opened by the line open.
func block(doc, open string) string {
	_, rest, ok := strings.Cut(doc, "\n"+open+"\n")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, "\n```")
	return body
}

// command finds a pack command of ws.
func command(ws *workspace.Workspace, surface, member string) (*workspace.CommandPack, *workspace.Command) {
	for _, p := range ws.CommandPacks {
		for _, c := range p.Commands {
			if p.ID == surface && c.ID == member {
				return p, c
			}
		}
	}
	return nil, nil
}

// shown writes an argv as the page does.
func shown(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if strings.ContainsAny(a, ` "'`) {
			a = `"` + a + `"`
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
