//go:build linux

package packs

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// beneathFixture is a root with files, links in and out, a FIFO, a socket
// and a hard link, beside a directory outside it:
//
//	root/file.txt         "inside"
//	root/sub/deep.txt     "deep"
//	root/link-in -> sub   (inside)
//	root/link-file -> sub/deep.txt (inside)
//	root/link-out -> ../outside
//	root/rel-out -> ../outside/secret.txt
//	root/abs-out -> <abs>/outside/secret.txt
//	root/loop-a -> loop-b -> loop-a
//	root/fifo, root/sock
//	root/hard.txt         hard link of outside/secret.txt
//	outside/secret.txt    "SECRET"
func beneathFixture(t testing.TB) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root + "/sub", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(root+"/file.txt", "inside")
	write(root+"/sub/deep.txt", "deep")
	write(outside+"/secret.txt", "SECRET")
	for link, target := range map[string]string{
		"link-in": "sub", "link-file": "sub/deep.txt", "link-out": "../outside", "rel-out": "../outside/secret.txt",
		"abs-out": outside + "/secret.txt", "loop-a": "loop-b", "loop-b": "loop-a",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(root+"/fifo", 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", root+"/sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Link(outside+"/secret.txt", root+"/hard.txt"); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

// TestOpenBound: what a path_within argument may open.
func TestOpenBound(t *testing.T) {
	t.Parallel()
	root, outside := beneathFixture(t)
	tests := []struct {
		name, path string
		want       string // content, "<dir>" for a directory; "" with err
		err        string
	}{
		{name: "file", path: root + "/file.txt", want: "inside"},
		{name: "nested", path: root + "/sub/deep.txt", want: "deep"},
		{name: "the root itself", path: root, want: "<dir>"},
		{name: "a directory", path: root + "/sub", want: "<dir>"},
		{name: "through a link inside", path: root + "/link-in/deep.txt", want: "deep"},
		{name: "a link inside", path: root + "/link-file", want: "deep"},
		{name: ".. back inside", path: root + "/sub/../file.txt", want: "inside"},
		{name: ".. out", path: root + "/../outside/secret.txt", err: "is not within"},
		{name: "absolute outside", path: outside + "/secret.txt", err: "is not within"},
		{name: "symlinked parent out", path: root + "/link-out/secret.txt", err: "is not within"},
		{name: "relative symlink out", path: root + "/rel-out", err: "is not within"},
		{name: "absolute symlink out", path: root + "/abs-out", err: "is not within"},
		{name: "symlink loop", path: root + "/loop-a", err: "too many levels of symbolic links"},
		{name: "sibling prefix", path: root + "-evil/x", err: "is not within"},
		{name: "missing", path: root + "/nope.txt", err: "does not exist"},
		{name: "FIFO", path: root + "/fifo", err: "a FIFO"},
		{name: "socket", path: root + "/sock", err: "a socket"},
		{name: "hard link", path: root + "/hard.txt", err: "hard link"},
		{name: "device", path: "/dev/null", err: "a character device"},
	}
	for _, tt := range tests {
		rootFor := root
		if tt.name == "device" {
			rootFor = "/dev"
		}
		f, err := openBound(BoundPath{Param: "p", Value: tt.path, Path: tt.path, Root: rootFor})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
			}
			if f != nil {
				f.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := "<dir>"
		if fi, _ := f.Stat(); !fi.IsDir() {
			b, _ := io.ReadAll(f)
			got = string(b)
		}
		f.Close()
		if got != tt.want {
			t.Errorf("%s: read %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestOpenPathBeneath is the opener below relBeneath, which refuses these
// names first: it is what holds when a name changes after relBeneath read
// it. Links out of the root, absolute or relative, in the last component
// or before it, are refused, and so are /proc's magic links, which read as
// absolute paths.
func TestOpenPathBeneath(t *testing.T) {
	t.Parallel()
	root, outside := beneathFixture(t)
	secret, err := os.Open(outside + "/secret.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer secret.Close()
	fd := strconv.Itoa(int(secret.Fd()))
	tests := []struct{ root, rel, want string }{
		{root, "file.txt", "inside"},
		{root, "link-file", "deep"},
		{root, "link-in/../file.txt", "inside"},
		{root, "link-out/secret.txt", ""},
		{root, "rel-out", ""},
		{root, "abs-out", ""},
		{root, "sub/../../outside/secret.txt", ""},
		{root, "link-in/../../outside/secret.txt", ""},
		{"/proc", "self/fd/" + fd, ""},
		{"/proc", "thread-self/fd/" + fd, ""},
		{"/proc", "self/root" + outside + "/secret.txt", ""},
		{"/proc", "self/cwd", ""},
	}
	for _, tt := range tests {
		r, err := openRoot(tt.root)
		if err != nil {
			t.Fatal(err)
		}
		f, err := openPath(r, tt.rel)
		r.Close()
		if tt.want == "" {
			if err == nil {
				link, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
				f.Close()
				t.Errorf("%s beneath %s: opened %s", tt.rel, tt.root, link)
			} else if be := beneathError(err); !errors.Is(be, errNotBeneath) {
				t.Errorf("%s beneath %s: %v, want it refused as not within", tt.rel, tt.root, be)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.rel, err)
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		fd, err := reopen(int(f.Fd()), unix.O_RDONLY|unix.O_CLOEXEC, &st)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.rel, err)
		}
		b, _ := io.ReadAll(os.NewFile(uintptr(fd), tt.rel))
		if string(b) != tt.want {
			t.Errorf("%s: read %q, want %q", tt.rel, b, tt.want)
		}
	}
}

// TestOpenRootMoved: a root whose name now leads elsewhere through a
// symbolic link (swapped in after the grant was resolved) is refused.
func TestOpenRootMoved(t *testing.T) {
	t.Parallel()
	root, outside := beneathFixture(t)
	moved := filepath.Join(filepath.Dir(root), "moved")
	if err := os.Symlink(outside, moved); err != nil {
		t.Fatal(err)
	}
	if _, err := openRoot(moved); err == nil || !strings.Contains(err.Error(), "now leads to "+outside) {
		t.Errorf("openRoot through a symbolic link: %v", err)
	}
	r, err := openRoot(root)
	if err != nil {
		t.Fatalf("the resolved root: %v", err)
	}
	r.Close()
}

// TestOpenBoundRace flips root/race between a file and a symlink to an
// outside file while it is opened again and again: the name is checked,
// then swapped, then opened — and not once is the outside file read.
func TestOpenBoundRace(t *testing.T) {
	t.Parallel()
	root, outside := beneathFixture(t)
	race := filepath.Join(root, "race")
	inside, link := filepath.Join(root, "race.file"), filepath.Join(root, "race.link")
	if err := os.WriteFile(inside, []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside+"/secret.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(inside, race); err != nil {
		t.Fatal(err)
	}
	// The file is hard-linked as race.file too; drop that name so that the
	// single-link rule lets it through.
	if err := os.Remove(inside); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(root, "race.tmp")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Swap: park the file away, put the link in its place, and back.
			if err := os.Rename(race, tmp); err != nil {
				t.Error(err)
				return
			}
			_ = os.Rename(link, race)
			_ = os.Rename(race, link)
			_ = os.Rename(tmp, race)
			flips.Add(1)
		}
	}()
	const calls = 2000
	var inside1, refused, outsideReads int
	for range calls {
		f, err := openBound(BoundPath{Param: "p", Value: "race", Path: race, Root: root})
		if err != nil {
			refused++
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		switch string(b) {
		case "inside":
			inside1++
		case "SECRET":
			outsideReads++
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d opens during %d flips: %d read the inside file, %d refused (mid-swap), %d read the outside file", calls, flips.Load(), inside1, refused, outsideReads)
	if outsideReads != 0 {
		t.Fatalf("%d opens read the outside file", outsideReads)
	}
	if inside1 == 0 {
		t.Fatalf("no open succeeded; the test proves nothing")
	}
}

// TestRunBoundPaths runs real jq on bound arguments: it reads /dev/fd/3,
// the file the gateway opened, and a refused path never reaches it.
func TestRunBoundPaths(t *testing.T) {
	t.Parallel()
	requireProgram(t, "jq")
	root, outside := beneathFixture(t)
	if err := os.WriteFile(root+"/doc.json", []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside+"/doc.json", []byte(`{"a": "outside"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, nil)
	r.BaseDir = filepath.Dir(root)
	pack := packOf(command("q", "jq", "-c", "{filter}", "{file}"))
	roots := map[string]string{"file": root}
	tests := []struct {
		file, want, err string
	}{
		{file: "root/doc.json", want: `{"a":1,"name":"/dev/fd/3"}`},
		{file: root + "/doc.json", want: `{"a":1,"name":"/dev/fd/3"}`},
		{file: "root/../outside/doc.json", err: "is not within"},
		{file: outside + "/doc.json", err: "is not within"},
		{file: "root/link-out/doc.json", err: "is not within"},
		{file: "root/fifo", err: "a FIFO"},
		{file: "-L" + root, err: "is not within"},
	}
	for _, tt := range tests {
		inv, err := r.PrepareBound(pack, pack.Commands[0], map[string]any{"filter": ". + {name: input_filename}", "file": tt.file}, roots)
		if err == nil && tt.err != "" {
			var res *Result
			res, err = r.Run(context.Background(), inv)
			if err == nil {
				t.Errorf("%s: ran: %+v", tt.file, res)
				continue
			}
		}
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.file, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if got := strings.Join(inv.Argv, " "); !strings.HasSuffix(got, " /dev/fd/3") {
			t.Errorf("argv %q, want the file as /dev/fd/3", got)
		}
		res, err := r.Run(context.Background(), inv)
		if err != nil || !res.OK() || strings.TrimSpace(string(res.Stdout)) != tt.want {
			t.Errorf("%s: %v %+v", tt.file, err, res)
		}
		if len(res.Bound) != 1 || res.Bound[0].Value != tt.file || res.Bound[0].FD != 3 {
			t.Errorf("Bound = %+v", res.Bound)
		}
	}
}

// TestRunBoundList binds every item of a spread list: rg searches the
// directories the gateway opened.
func TestRunBoundList(t *testing.T) {
	t.Parallel()
	requireProgram(t, "rg")
	root, _ := beneathFixture(t)
	r := newTestRunner(t, nil)
	r.BaseDir = root
	c := command("s", "rg", "--no-config", "--no-heading", "-n", "--regexp={pattern}", "--", "{paths}")
	c.Spread = []string{"paths"}
	pack := packOf(c)
	inv, err := r.PrepareBound(pack, c, map[string]any{"pattern": "deep|inside", "paths": []any{"sub", "file.txt"}}, map[string]string{"paths": root})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), inv)
	if err != nil || !res.OK() {
		t.Fatalf("%v %+v", err, res)
	}
	out := string(res.Stdout)
	if !strings.Contains(out, "/dev/fd/3/deep.txt:1:deep") || !strings.Contains(out, "1:inside") {
		t.Errorf("rg output:\n%s", out)
	}
	if _, err := r.PrepareBound(pack, c, map[string]any{"pattern": "x", "paths": []any{"sub", "link-out"}}, map[string]string{"paths": root}); err == nil || !strings.Contains(err.Error(), "is not within") {
		t.Errorf("an item through a link out: %v", err)
	}
}

// TestWriteToBeneath: an edit-in-place bound by path_within writes beneath
// the root only, through a descriptor of the target's directory.
func TestWriteToBeneath(t *testing.T) {
	t.Parallel()
	requireProgram(t, "jq")
	root, outside := beneathFixture(t)
	jq := bundledJQ(t)
	edit := commandOf(t, jq, "edit-in-place")
	r := newTestRunner(t, nil)
	r.BaseDir = root
	doc := root + "/doc.json"
	if err := os.WriteFile(doc, []byte(`{"v":1}`), 0o640); err != nil {
		t.Fatal(err)
	}
	roots := map[string]string{"file": root}
	inv, err := r.PrepareBound(jq, edit, map[string]any{"filter": ".v = 2", "file": "doc.json"}, roots)
	if err != nil {
		t.Fatal(err)
	}
	if inv.WriteRoot != root || inv.WriteTo != root+"/doc.json" {
		t.Errorf("WriteTo %q beneath %q", inv.WriteTo, inv.WriteRoot)
	}
	res, err := r.Run(context.Background(), inv)
	if err != nil || !res.OK() {
		t.Fatalf("%v %+v", err, res)
	}
	got, _ := os.ReadFile(doc)
	fi, _ := os.Stat(doc)
	if !strings.Contains(string(got), `"v": 2`) || fi.Mode().Perm() != 0o640 || res.WrittenTo != doc {
		t.Errorf("after the edit: %q mode %v, WrittenTo %q", got, fi.Mode(), res.WrittenTo)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".toolgate-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	for _, file := range []string{"link-out/new.json", "../outside/new.json", outside + "/secret.txt"} {
		if _, err := r.PrepareBound(jq, edit, map[string]any{"filter": ".", "file": file}, roots); err == nil || !strings.Contains(err.Error(), "is not within") {
			t.Errorf("write_to %s: %v", file, err)
		}
	}
	if _, err := os.Stat(outside + "/new.json"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written outside the root: %v", err)
	}
}

// FuzzRelBeneath: whatever the path, a successful relBeneath names a
// place that is within the root once resolved, and openBound never hands
// out a descriptor whose file lies outside the root.
func FuzzRelBeneath(f *testing.F) {
	for _, s := range []string{"file.txt", "../outside/secret.txt", "link-out/secret.txt", "sub/../../root/file.txt", "abs-out", "./sub//deep.txt", "link-in/../file.txt", "/etc/passwd"} {
		f.Add(s)
	}
	root, _ := beneathFixture(f)
	f.Fuzz(func(t *testing.T, p string) {
		if strings.IndexByte(p, 0) >= 0 {
			return
		}
		path := absUncleaned(root, p)
		rel, err := relBeneath(root, path)
		if err != nil {
			return
		}
		if strings.HasPrefix(rel, "/") || rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") {
			t.Fatalf("%q: rel %q escapes", p, rel)
		}
		file, err := openBound(BoundPath{Param: "p", Value: p, Path: path, Root: root})
		if err != nil {
			return
		}
		link, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(file.Fd())))
		file.Close()
		if link != root && !strings.HasPrefix(link, root+"/") {
			t.Fatalf("%q opened %s, outside %s", p, link, root)
		}
	})
}
