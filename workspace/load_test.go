package workspace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixtures lists the .yaml files of one testdata directory.
func fixtures(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no fixtures in testdata/%s", dir)
	}
	return files
}

// golden compares got with the golden file, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./workspace/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update after checking the change)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// markedLines returns the lines of a fixture carrying a "# ERR" comment:
// where the loader must report, written independently of the golden.
func markedLines(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		if strings.HasSuffix(sc.Text(), "# ERR") {
			lines = append(lines, n)
		}
	}
	return lines
}

func TestValidFixtures(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t, "valid") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			ws, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got, err := json.MarshalIndent(ws, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(path, ".yaml")+".json", append(got, '\n'))
		})
	}
}

func TestInvalidFixtures(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t, "invalid") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			ws, err := Load(path)
			if err == nil {
				t.Fatalf("Load succeeded, want errors (workspace %+v)", ws)
			}
			// What decodes is returned for the later checks; a file that is
			// not YAML, or not one mapping, decodes to nothing.
			undecodable := strings.Contains(err.Error(), "YAML syntax") || strings.Contains(err.Error(), "one YAML document") ||
				strings.Contains(err.Error(), "file is empty") || strings.Contains(err.Error(), "a workspace file is a mapping")
			if (ws == nil) != undecodable {
				t.Errorf("Load returned workspace %v with its errors, want one only when the file decodes", ws != nil)
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error is %T, want ErrorList: %v", err, err)
			}
			var lines []int
			for _, e := range list {
				if e.Pos.File != path || e.Pos.Line <= 0 || e.Pos.Col <= 0 {
					t.Errorf("error without a position in %s: %v", path, e)
				}
				if !slices.Contains(lines, e.Pos.Line) {
					lines = append(lines, e.Pos.Line)
				}
			}
			slices.Sort(lines)
			if want := markedLines(t, path); !slices.Equal(lines, want) {
				t.Errorf("errors on lines %v, want the lines marked # ERR: %v\n%v", lines, want, err)
			}
			golden(t, strings.TrimSuffix(path, ".yaml")+".err", []byte(err.Error()+"\n"))
		})
	}
}

// TestAllErrorsAtOnce checks that independent mistakes in different parts of
// a file are all reported by one load, in file order.
func TestAllErrorsAtOnce(t *testing.T) {
	t.Parallel()
	src := `version: 1
mcp_servers:
  - id: web
    url: http://127.0.0.1:9000/mcp
    permission: relaxed
command_packs:
  - id: git
    commands:
      - id: log
        argv: [git, log, "{credential.gh}"]
agents:
  - id: reader
    token: s3cr3t
`
	_, err := Parse("three.yaml", []byte(src))
	list := AsList(err)
	want := []Pos{
		{File: "three.yaml", Line: 5, Col: 17},
		{File: "three.yaml", Line: 10, Col: 26},
		{File: "three.yaml", Line: 13, Col: 12},
	}
	if len(list) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(list), len(want), err)
	}
	for i, e := range list {
		if e.Pos != want[i] {
			t.Errorf("error %d at %s, want %s: %s", i, e.Pos, want[i], e.Msg)
		}
	}
}

func TestLoadFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	data := append([]byte("version: 1\n# "), bytes.Repeat([]byte("x"), MaxFileBytes)...)
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "nope.yaml"), "pass -w FILE"},
		{"directory", dir, "read workspace"},
		{"over the size cap", big, big + ":1:1: the workspace file is larger than 8 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, err := Load(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load(%s) = %v, %v; want an error containing %q", tt.path, ws, err, tt.want)
			}
		})
	}
}

// TestLoadResult checks decoded values that the golden JSON would only show
// in passing: positions, bundled expansion and defaults.
func TestLoadResult(t *testing.T) {
	t.Parallel()
	ws, err := Load("testdata/valid/use-bundled.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.CommandPacks) != 2 {
		t.Fatalf("got %d packs, want 2", len(ws.CommandPacks))
	}
	first, second := ws.CommandPacks[0], ws.CommandPacks[1]
	checks := []struct {
		name      string
		got, want any
	}{
		{"first id defaults to the bundle id", first.ID, "json-tools"},
		{"first is bundled", first.Bundled, true},
		{"override kept", first.PermissionOverrides["edit-in-place"], TierStrict},
		{"bundle fields kept", first.Description, "Read and transform JSON files with jq."},
		{"bundled commands", len(first.Commands), 4},
		{"bundled requires", first.Requires[0].Binary, "jq"},
		{"pos is the workspace entry", first.Pos, Pos{File: "testdata/valid/use-bundled.yaml", Line: 5, Col: 5}},
		{"command pos is in the bundle", first.Commands[0].Pos.File, "bundled/packs/json-tools.yaml"},
		{"second id", second.ID, "json-strict"},
		{"second tier", second.Permission, TierStrict},
		{"second description", second.Description, "The same tools, every call approved."},
		{"key pos of an override", first.KeyPos["permission_overrides.edit-in-place"], Pos{File: "testdata/valid/use-bundled.yaml", Line: 8, Col: 7}},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if &first.Commands[0] == &second.Commands[0] || first.Commands[0] == second.Commands[0] {
		t.Errorf("two uses of one bundle share command values; each must own its declarations")
	}
}

// TestExampleWorkspaceLoads keeps the shipped demo workspace loadable.
func TestExampleWorkspaceLoads(t *testing.T) {
	t.Parallel()
	ws, err := Load(filepath.Join("..", "examples", "command-packs", "toolgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.CommandPacks) != 2 || len(ws.Agents) != 2 || ws.CommandPacks[0].ID != "json-tools" {
		t.Errorf("got %d packs (first %q), %d agents", len(ws.CommandPacks), ws.CommandPacks[0].ID, len(ws.Agents))
	}
}
