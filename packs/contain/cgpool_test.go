//go:build linux

package contain

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestCgroupReuse: an emptied cgroup serves the next tree, and the next
// command runs in it normally; one that was killed (cgroup.kill) is never
// used again — the kernel would kill whatever is cloned into it later.
func TestCgroupReuse(t *testing.T) {
	t.Parallel()
	m := New(Options{Mode: ModeCgroup})
	defer m.Close()
	if m.Mode() != ModeCgroup {
		t.Skip("no cgroup can be made on this machine")
	}
	run := func(argv []string, stop time.Duration) (*Tree, string) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		ready, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer ready.Close()
		cmd.Stdout = w
		tr, err := m.Start(cmd, 0)
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		dir := tr.cgroup.dir
		if stop > 0 {
			// Once it says it ignores SIGTERM: its Stop ends with
			// cgroup.kill.
			if _, err := ready.Read(make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			if st := tr.Stop(stop); !st.Forced {
				t.Fatalf("the tree was not killed: %+v", st)
			}
		}
		_ = cmd.Wait()
		tr.Stop(0)
		if err := tr.Exit().Err(); err != nil && stop == 0 {
			t.Fatalf("%v in %s: %v", argv, dir, err)
		}
		tr.Release()
		return tr, dir
	}
	_, first := run([]string{"true"}, 0)
	if _, again := run([]string{"true"}, 0); again != first {
		t.Errorf("an emptied cgroup was not reused: %s, then %s", first, again)
	}
	_, killed := run([]string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.01; done`}, 50*time.Millisecond)
	if killed != first {
		t.Fatalf("the killed tree ran in %s, not in the idle %s", killed, first)
	}
	if _, next := run([]string{"true"}, 0); next == killed {
		t.Errorf("the cgroup killed with cgroup.kill (%s) was used again", killed)
	}
}
