package packs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteTo runs the bundled edit-in-place command with real jq: the file
// is replaced only when jq succeeds, keeps its mode, and no temporary file
// is left either way.
func TestWriteTo(t *testing.T) {
	t.Parallel()
	jq := bundledJQ(t)
	edit := commandOf(t, jq, "edit-in-place")
	const original = `{"version": 1, "name": "x"}`
	tests := []struct {
		name      string
		filter    string
		maxOutput int64
		symlink   bool
		want      string // "" means the original is untouched
		err       string
	}{
		{name: "success", filter: ".version = 2", want: "{\n  \"version\": 2,\n  \"name\": \"x\"\n}\n"},
		{name: "through a symlink", filter: "del(.name)", symlink: true, want: "{\n  \"version\": 1\n}\n"},
		{name: "jq fails", filter: ".version = ", err: "exit status 3"},
		{name: "runtime error", filter: ".name | error", err: "exit status 5"},
		{name: "output over the cap", filter: "[range(100000)]", maxOutput: 1024, err: "max_output"},
	}
	r := newTestRunner(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := filepath.Join(dir, "doc.json")
			if err := os.WriteFile(file, []byte(original), 0o640); err != nil {
				t.Fatal(err)
			}
			target := file
			if tt.symlink {
				target = filepath.Join(dir, "link.json")
				if err := os.Symlink("doc.json", target); err != nil {
					t.Fatal(err)
				}
			}
			pack := *jq
			pack.MaxOutput = 0
			if tt.maxOutput > 0 {
				pack.MaxOutput = 1024
			}
			res := mustRun(t, r, &pack, edit, map[string]any{"filter": tt.filter, "file": target})
			got, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if string(got) != original {
					t.Errorf("original changed to %q after a failed edit", got)
				}
				if !strings.Contains(res.Err, tt.err) || !strings.Contains(res.Err, "was left unchanged") || res.WrittenTo != "" {
					t.Errorf("Err %q WrittenTo %q; want %q and left unchanged", res.Err, res.WrittenTo, tt.err)
				}
			} else {
				if res.Err != "" || string(got) != tt.want || res.WrittenTo != file {
					t.Errorf("Err %q WrittenTo %q content %q; want %q in %s", res.Err, res.WrittenTo, got, tt.want, file)
				}
				if len(res.Stdout) != 0 || res.OutputBytes != int64(len(tt.want)) {
					t.Errorf("stdout %q, OutputBytes %d: output should go to the file only", res.Stdout, res.OutputBytes)
				}
			}
			fi, err := os.Stat(file)
			if err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v (%v), want 0640 preserved", fi.Mode(), err)
			}
			if fi, err := os.Lstat(target); tt.symlink && (err != nil || fi.Mode()&os.ModeSymlink == 0) {
				t.Errorf("the symlink was replaced: %v %v", fi.Mode(), err)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".toolgate-") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

func TestWriteToRefusesDirectory(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	c := command("c", "echo", "hi")
	c.Output.WriteTo = "{out}"
	c.Inputs["properties"].(map[string]any)["out"] = map[string]any{"type": "string"}
	inv, err := r.Prepare(packOf(c), c, map[string]any{"out": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(t.Context(), inv); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("Run error %v, want a refusal to replace a directory", err)
	}
}

func TestWriteToRelativeToCwd(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	dir := t.TempDir()
	c := command("c", "echo", "{text}")
	c.Output.WriteTo = "out/{name}.txt"
	c.Cwd = dir
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, r, packOf(c), c, map[string]any{"text": "hello", "name": "greeting"})
	got, err := os.ReadFile(filepath.Join(dir, "out", "greeting.txt"))
	if err != nil || string(got) != "hello\n" || res.Err != "" {
		t.Errorf("content %q (%v), Err %q", got, err, res.Err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "out", "greeting.txt")); fi == nil || fi.Mode().Perm() != newFileMode {
		t.Errorf("new file mode %v, want %v", fi.Mode(), newFileMode)
	}
}
