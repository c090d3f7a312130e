//go:build linux

package packs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// sortCommand is `sort -o {out} {in}`, a command writing a file it is
// given by name, with out listed under creates:.
func sortCommand() (*workspace.CommandPack, *workspace.Command) {
	c := command("sort", "sort", "-o", "{out}", "{in}")
	c.Effects = workspace.EffectWrite
	c.Creates = []string{"out"}
	return packOf(c), c
}

// entries lists a directory's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestCreatesBound: a missing file of a parameter listed under creates: is
// created beneath the root (mode 0644, whatever the umask) and the command
// writes it through /dev/fd/N; an existing one is not truncated by the
// gateway, only rewritten by the command.
func TestCreatesBound(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sort")
	root, _ := beneathFixture(t)
	if err := os.WriteFile(root+"/words.txt", []byte("pear\napple\nfig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, nil)
	r.BaseDir = root
	pack, c := sortCommand()
	roots := map[string]string{"in": root, "out": root}
	inv, err := r.PrepareBound(pack, c, map[string]any{"in": "words.txt", "out": "sub/sorted.txt"}, roots)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root + "/sub/sorted.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Prepare created the file (it must wait for Run: the call may be refused): %v", err)
	}
	if got := strings.Join(inv.Argv, " "); got != "sort -o /dev/fd/4 /dev/fd/3" {
		t.Errorf("argv %q", got)
	}
	res, err := r.Run(context.Background(), inv)
	if err != nil || !res.OK() {
		t.Fatalf("%v %+v", err, res)
	}
	got, err := os.ReadFile(root + "/sub/sorted.txt")
	if err != nil || string(got) != "apple\nfig\npear\n" {
		t.Fatalf("sorted.txt: %q %v", got, err)
	}
	if fi, _ := os.Lstat(root + "/sub/sorted.txt"); !fi.Mode().IsRegular() || fi.Mode().Perm() != newFileMode {
		t.Errorf("created file mode %v, want a regular file %v", fi.Mode(), newFileMode)
	}
	// It exists now: bound as any existing file, never truncated by the
	// gateway, rewritten by sort.
	if err := os.WriteFile(root+"/words.txt", []byte("b\na\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runBound(t, r, pack, c, map[string]any{"in": "words.txt", "out": "sub/sorted.txt"}, roots)
	if got, _ := os.ReadFile(root + "/sub/sorted.txt"); !res.OK() || string(got) != "a\nb\n" {
		t.Errorf("second sort: %q %+v", got, res)
	}
}

// runBound prepares and runs one bound call, failing on a Go error.
func runBound(t *testing.T, r *Runner, p *workspace.CommandPack, c *workspace.Command, args map[string]any, roots map[string]string) *Result {
	t.Helper()
	inv, err := r.PrepareBound(p, c, args, roots)
	if err != nil {
		t.Fatalf("PrepareBound: %v", err)
	}
	res, err := r.Run(context.Background(), inv)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// TestCreatesRefusedAtPrepare: every way a new file could land outside the
// root, or not be creatable at all, is refused by Prepare — which the
// gateway runs before it holds a call for approval — and nothing is
// created, inside or outside.
func TestCreatesRefusedAtPrepare(t *testing.T) {
	t.Parallel()
	root, outside := beneathFixture(t)
	for link, target := range map[string]string{"dangling": "missing.txt", "dangling-out": "../outside/planted.txt", "dangling-abs": outside + "/planted.txt"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := newTestRunner(t, nil)
	r.BaseDir = root
	pack, c := sortCommand()
	roots := map[string]string{"in": root, "out": root}
	rootBefore, outsideBefore := entries(t, root), entries(t, outside)
	tests := []struct{ out, want string }{
		{"nodir/sorted.txt", "neither does its directory; create the directory first"},
		{"../outside/new.txt", "is not within"},
		{outside + "/new.txt", "is not within"},
		{"/new.txt", "is not within"},
		{"link-out/new.txt", "is not within"},
		{"sub/../../outside/new.txt", "is not within"},
		{"dangling", "is a symbolic link to a file that does not exist"},
		{"dangling-out", "is not within"},
		{"dangling-abs", "is not within"},
		{"newdir/", "does not name a file to create"},
		{"file.txt/new.txt", "not a directory"},
	}
	for _, tt := range tests {
		_, err := r.PrepareBound(pack, c, map[string]any{"in": "file.txt", "out": tt.out}, roots)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `parameter "out"`) {
			t.Errorf("out %q: %v, want a refusal of out saying %q", tt.out, err, tt.want)
		}
	}
	// A parameter not listed under creates: must exist.
	if _, err := r.PrepareBound(pack, c, map[string]any{"in": "absent.txt", "out": "sorted.txt"}, roots); err == nil ||
		!strings.Contains(err.Error(), `"absent.txt" does not exist (for a file the command writes, a pack author lists the parameter under creates:`) {
		t.Errorf("a missing input: %v", err)
	}
	if got := entries(t, root); !slices.Equal(got, rootBefore) {
		t.Errorf("the root changed: %q, was %q", got, rootBefore)
	}
	if got := entries(t, outside); !slices.Equal(got, outsideBefore) {
		t.Errorf("something was created outside the root: %q, was %q", got, outsideBefore)
	}
}

// TestCreatedRemovedOnFailure: the file the gateway created for a call
// that fails is removed again, and the result says so; a file that
// existed before stays, and a file now at the name that is not the one
// created is left alone.
func TestCreatedRemovedOnFailure(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sort")
	root, _ := beneathFixture(t)
	r := newTestRunner(t, nil)
	r.BaseDir = root
	pack, c := sortCommand()
	roots := map[string]string{"in": root, "out": root}
	// sort fails reading a directory.
	res := runBound(t, r, pack, c, map[string]any{"in": "sub", "out": "failed.txt"}, roots)
	if res.OK() || !strings.Contains(res.Err, "failed.txt, created for this call, was removed") {
		t.Errorf("result: %+v", res)
	}
	if _, err := os.Lstat(root + "/failed.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the created file stayed after the failure: %v", err)
	}
	if err := os.WriteFile(root+"/kept.txt", []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runBound(t, r, pack, c, map[string]any{"in": "sub", "out": "kept.txt"}, roots)
	if _, err := os.Stat(root + "/kept.txt"); res.OK() || err != nil || strings.Contains(res.Err, "removed") {
		t.Errorf("a file that existed before: %v %+v", err, res)
	}
	// The name now names another file: remove leaves it.
	b := BoundPath{Param: "out", Value: "swapped.txt", Path: root + "/swapped.txt", Root: root, Create: true}
	f, cf, err := openOrCreateBound(b)
	if err != nil || cf == nil {
		t.Fatalf("create: %v %v", err, cf)
	}
	f.Close()
	if err := os.Remove(root + "/swapped.txt"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root+"/swapped.txt", []byte("someone else's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if removed := (createdFiles{cf}).settle(true); len(removed) != 0 {
		t.Errorf("removed %q, which is not the file created", removed)
	}
	if got, _ := os.ReadFile(root + "/swapped.txt"); string(got) != "someone else's" {
		t.Errorf("swapped.txt: %q", got)
	}
}

// TestCreateBoundRace: while the opener creates files, one flipper swaps
// the parent directory for a symlink to outside the root and back, and
// another puts a symlink to outside at the file's own name and takes it
// away. Every file created is inside the root; nothing appears outside.
func TestCreateBoundRace(t *testing.T) {
	t.Parallel()
	root, outside := beneathFixture(t)
	pdir, parked, plink := root+"/pdir", root+"/pdir.parked", root+"/pdir.link"
	if err := os.Mkdir(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", plink); err != nil {
		t.Fatal(err)
	}
	final := root + "/final.txt"
	stop := make(chan struct{})
	var flips atomic.Int64
	var wg sync.WaitGroup
	flip := func(step func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				step()
				flips.Add(1)
			}
		}()
	}
	flip(func() {
		_ = os.Rename(pdir, parked)
		_ = os.Rename(plink, pdir)
		_ = os.Rename(pdir, plink)
		_ = os.Rename(parked, pdir)
	})
	flip(func() {
		_ = os.Symlink(outside+"/planted.txt", final)
		_ = os.Remove(final)
	})
	const calls = 1000
	var created, refused int
	for i := range calls {
		for _, b := range []BoundPath{
			{Param: "out", Value: "pdir/new.txt", Path: pdir + "/new-" + strconv.Itoa(i) + ".txt", Root: root, Create: true},
			{Param: "out", Value: "final.txt", Path: final, Root: root, Create: true},
		} {
			f, cf, err := openOrCreateBound(b)
			if err != nil {
				refused++
				continue
			}
			at, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
			f.Close()
			if !strings.HasPrefix(at, root+"/") {
				t.Errorf("%s opened %s, outside the root", b.Value, at)
			}
			if cf != nil {
				created++
				(createdFiles{cf}).settle(true)
			}
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d opens during %d flips: %d created inside the root, %d refused mid-swap", 2*calls, flips.Load(), created, refused)
	if got := entries(t, outside); !slices.Equal(got, []string{"secret.txt"}) {
		t.Fatalf("files appeared outside the root: %q", got)
	}
	if created == 0 || flips.Load() < 10 {
		t.Fatalf("the race did not happen (created %d, flips %d): the test proves nothing", created, flips.Load())
	}
}
