package transport

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/packs/contain"
)

// TestServerExit: a contained server's exit reads as cmd.Wait would give
// it for the server run directly — its helper's report, not the helper's
// own exit — and a helper killed before reporting says so; run directly,
// the wait error stands.
func TestServerExit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script, want string
	}{
		{"exited 0", "exit 0", ""},
		{"exit status", "exit 3", "exit status 3"},
		{"signal", "kill -TERM $$", "signal: terminated"},
		{"helper killed", "kill -KILL $PPID; exit 0", "ended without a report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("sh", "-c", tc.script)
			tree, err := startServer(cmd, testContain)
			if err != nil {
				t.Fatal(err)
			}
			werr := cmd.Wait()
			tree.Stop(0)
			got := serverExit(tree, werr)
			tree.Release()
			if tc.want == "" {
				if got != nil {
					t.Errorf("got %v, want nil", got)
				}
				return
			}
			if got == nil || !strings.Contains(got.Error(), tc.want) {
				t.Errorf("got %v, want %q", got, tc.want)
			}
		})
	}
	werr := errors.New("exit status 9")
	cmd := exec.Command("true")
	if tree, err := startServer(cmd, nil); err != nil || tree != nil || !cmd.SysProcAttr.Setpgid {
		t.Fatalf("direct start: tree %v, err %v, attrs %+v", tree, err, cmd.SysProcAttr)
	}
	_ = cmd.Wait()
	if got := serverExit(nil, werr); got != werr {
		t.Errorf("direct: got %v, want the wait error", got)
	}
}

// testContain is the containment the package's stdio tests share, as the
// gateway shares one.
var testContain = contain.New(contain.Options{})
