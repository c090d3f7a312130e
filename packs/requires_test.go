package packs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

func loadFixture(t *testing.T, path string) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return ws
}

func TestCheckRequiresValid(t *testing.T) {
	t.Parallel()
	ws := loadFixture(t, "testdata/requires/valid.yaml")
	if errs := CheckRequires(context.Background(), ws); len(errs) != 0 {
		t.Fatalf("CheckRequires reported problems on a machine with jq and git:\n%v", errs)
	}
}

func TestCheckRequiresBundledJQ(t *testing.T) {
	t.Parallel()
	ws := loadFixture(t, "testdata/jq-workspace.yaml")
	if errs := CheckRequires(context.Background(), ws); len(errs) != 0 {
		t.Fatalf("bundled json-tools requires not met: %v", errs)
	}
}

func TestCheckRequiresInvalid(t *testing.T) {
	t.Parallel()
	const file = "testdata/requires/invalid.yaml"
	ws := loadFixture(t, file)
	errs := CheckRequires(context.Background(), ws)
	errs.Sort()
	want := []struct {
		pos string
		msg string // regexp
	}{
		{file + ":6:9", `^pack "missing" requires toolgate-no-such-binary >=1\.0, but toolgate-no-such-binary is not found on PATH; install toolgate-no-such-binary >=1\.0 or add its directory to PATH$`},
		{file + ":7:9", `^pack "missing" requires toolgate-no-such-binary-either, which is not found on PATH; install it or add its directory to PATH$`},
		{file + ":10:9", `^pack "too-low" requires jq >=99, but \S*/jq is version \d+\.\d+\.\d+, which does not satisfy ">=99"; install a matching jq \(or put one earlier on PATH\), or change the constraint$`},
		{file + ":11:9", `^pack "too-low" requires git <2, but \S*/git is version 2\.\d+\.\d+, which does not satisfy "<2"; `},
		{file + ":14:9", `^pack "bad-constraint": requires jq version "at least 1\.6" is not a valid constraint \(.+\); write it like ">=1\.6"`},
		{file + ":17:9", `^pack "silent" requires sh >=1, but the version of \S*/sh could not be read: "sh -c echo no version here" printed no version number \(x\.y or x\.y\.z\); first line: "no version here"; set version_args`},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		e := errs[i]
		if e.Pos.String() != w.pos {
			t.Errorf("error %d at %s, want %s (%s)", i, e.Pos, w.pos, e.Msg)
		}
		if !regexp.MustCompile(w.msg).MatchString(e.Msg) {
			t.Errorf("error %d at %s:\n got: %s\nwant: /%s/", i, e.Pos, e.Msg, w.msg)
		}
		if !strings.HasPrefix(e.Error(), w.pos+": ") {
			t.Errorf("error %d prints as %q, want it to start with %q", i, e.Error(), w.pos+": ")
		}
	}
}

// TestCheckRequiresRunsEachProbeOnce declares 200 packs needing the same
// binary and counts how often the binary ran.
func TestCheckRequiresRunsEachProbeOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakever")
	script := "#!/bin/sh\necho run >> \"$(dirname \"$0\")/calls\"\necho \"fakever version 1.2.3 (2024-01-01)\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var y strings.Builder
	y.WriteString("version: 1\ncommand_packs:\n")
	for i := range 200 {
		fmt.Fprintf(&y, "  - id: p%d\n    requires: [{binary: %q, version: \">=1.2\"}]\n", i, bin)
	}
	y.WriteString("  - id: other-args\n    requires: [{binary: " + fmt.Sprintf("%q", bin) + ", version: \"<1.2\", version_args: [-V]}]\n")
	ws, err := workspace.Parse("gen.yaml", []byte(y.String()))
	if err != nil {
		t.Fatal(err)
	}
	errs := CheckRequires(context.Background(), ws)
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, `is version 1.2.3, which does not satisfy "<1.2"`) || errs[0].Pos.Line != 404 {
		t.Errorf("want exactly the other-args pack's error at line 404, got:\n%v", errs)
	}
	calls, err := os.ReadFile(filepath.Join(dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(calls), "run"); n != 2 {
		t.Errorf("fakever ran %d times for 200 packs with one (binary, args) pair and one with other args; want 2", n)
	}
}
