package grantcheck

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// checkLoaded runs what `toolgate check` runs after loading (requires
// aside): grants and approval rules on whatever loaded.
func checkLoaded(ws *workspace.Workspace, loadErr error) workspace.ErrorList {
	errs := workspace.AsList(loadErr)
	policy, err := CompileLoaded(ws)
	errs = append(errs, workspace.AsList(err)...)
	if policy != nil {
		_, err := policy.CompileApprovalRules(policy.SettledRules(ws))
		errs = append(errs, workspace.AsList(err)...)
	}
	errs.Sort()
	return errs
}

// marked returns the lines of a fixture ending in "# <mark>".
func marked(t *testing.T, path, mark string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		if strings.HasSuffix(sc.Text(), "# "+mark) {
			lines = append(lines, n)
		}
	}
	return lines
}

func errorLines(errs workspace.ErrorList) []int {
	var lines []int
	for _, e := range errs {
		if !slices.Contains(lines, e.Pos.Line) {
			lines = append(lines, e.Pos.Line)
		}
	}
	slices.Sort(lines)
	return lines
}

// TestCompileLoadedFixtures checks files mixing load errors and grant
// errors: every error is reported in one run, at the lines marked # ERR,
// and none at the lines marked # QUIET, where a check that ignored the load
// errors would report a consequence of them — which the same workspace
// with its damage marks cleared shows.
func TestCompileLoadedFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "loaded", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			ws, loadErr := workspace.Load(path)
			if ws == nil || loadErr == nil {
				t.Fatalf("want a workspace with load errors, got %v, %v", ws, loadErr)
			}
			errs := checkLoaded(ws, loadErr)
			if got, want := errorLines(errs), marked(t, path, "ERR"); !slices.Equal(got, want) {
				t.Errorf("errors on lines %v, want the lines marked # ERR: %v\n%v", got, want, errs)
			}
			golden(t, filepath.Join("loaded", strings.TrimSuffix(filepath.Base(path), ".yaml")+".err"), []byte(errs.Error()+"\n"))

			quiet := marked(t, path, "QUIET")
			if len(quiet) == 0 {
				return
			}
			clearDamage(ws)
			naive := errorLines(checkLoaded(ws, loadErr))
			for _, l := range quiet {
				if !slices.Contains(naive, l) {
					t.Errorf("line %d is marked # QUIET, but even ignoring the load errors nothing is reported there", l)
				}
			}
		})
	}
}

// clearDamage removes the marks a load with errors leaves.
func clearDamage(ws *workspace.Workspace) {
	ws.Unread = workspace.Unread{}
	for _, s := range ws.MCPServers {
		s.Damaged = false
	}
	for _, p := range ws.CommandPacks {
		p.Damaged, p.UnreadCommands = false, false
		for _, c := range p.Commands {
			c.Damaged = false
		}
	}
	for _, a := range ws.Agents {
		for _, g := range a.Grants {
			g.Damaged = false
		}
	}
	for _, r := range ws.Gateway.Approvals.Rules {
		r.Damaged = false
	}
}

// TestCompileLoadedClean checks that on a workspace without load errors
// CompileLoaded reports exactly what Compile reports.
func TestCompileLoadedClean(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		ws, err := workspace.Load(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		p1, err1 := Compile(ws)
		p2, err2 := CompileLoaded(ws)
		if workspace.AsList(err1).Error() != workspace.AsList(err2).Error() || (err1 == nil) != (p1 != nil) || p2 == nil {
			t.Errorf("%s: Compile = %v, %v; CompileLoaded = %v, %v", path, p1 != nil, err1, p2 != nil, err2)
		}
		if n := len(p2.SettledRules(ws)); n != len(ws.Gateway.Approvals.Rules) {
			t.Errorf("%s: %d settled rules of %d", path, n, len(ws.Gateway.Approvals.Rules))
		}
	}
}
