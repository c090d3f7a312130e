package grantcheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestBoundLayoutBundledAtConstraint: for a bundled pack, whose file the
// operator does not edit, a misplaced bound placeholder is reported at the
// grant's constraint. No bundled command composes a bindable placeholder,
// so the test gives one such an element after loading.
func TestBoundLayoutBundledAtConstraint(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Load("testdata/path_within_layout_valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(ws); err != nil {
		t.Fatalf("the fixture compiles as loaded: %v", err)
	}
	for _, p := range ws.CommandPacks {
		for _, c := range p.Commands {
			if p.Bundled && c.ID == "files" {
				c.Argv = append(c.Argv[:len(c.Argv)-1], "{paths}/..")
			}
		}
	}
	_, err = Compile(ws)
	var list workspace.ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("Compile: %v, want one error", err)
	}
	if got := list[0].Pos.String(); got != "testdata/path_within_layout_valid.yaml:39:11" {
		t.Errorf("reported at %s, want the constraint's position", got)
	}
	if !strings.Contains(list[0].Msg, `command ripgrep:files: argv element 6 "{paths}/..": {paths} is bound by path_within`) {
		t.Errorf("message: %s", list[0].Msg)
	}
}
