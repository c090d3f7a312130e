package transport

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// TestSupervisedExit: the supervisor's report becomes the server's own exit
// as cmd.Wait would give it run directly; without a readable report (the
// supervisor died first, or wrote garbage or too much) the supervisor's
// wait error stands.
func TestSupervisedExit(t *testing.T) {
	t.Parallel()
	werr := errors.New("signal: killed (the supervisor)")
	for _, tc := range []struct {
		name, report, want string
	}{
		{"exited 0", `{"exit":0}`, ""},
		{"exit status", `{"exit":3}`, "exit status 3"},
		{"signal", `{"exit":-1,"signal":15}`, "signal: terminated"},
		{"could not start", `{"exit":0,"start_error":"fork/exec /nope: no such file or directory"}`, "could not start: fork/exec /nope"},
		{"no report", ``, werr.Error()},
		{"garbage", `{"exit":`, werr.Error()},
		{"over the bound", `{"exit":3,"pad":"` + strings.Repeat("x", maxReport) + `"}`, werr.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			go func() {
				_, _ = w.WriteString(tc.report)
				w.Close()
			}()
			got := supervisedExit(r, werr)
			if tc.want == "" {
				if got != nil {
					t.Errorf("got %v, want nil", got)
				}
				return
			}
			if got == nil || !strings.HasPrefix(got.Error(), tc.want) {
				t.Errorf("got %v, want %q", got, tc.want)
			}
		})
	}
}

// TestSuperviseCmd: the command is rewritten to run under the supervisor —
// its program and argv carried in the supervisor's arguments, the control
// and report pipes as descriptors 3 and 4 — and the gateway keeps the
// other ends; closeChildEnds and closeFiles release them.
func TestSuperviseCmd(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("/bin/cat", "-u")
	cmd.Env = []string{"A=1"}
	ctl, report, err := superviseCmd(cmd, "/path/to/toolgate")
	if err != nil {
		t.Fatal(err)
	}
	defer closeFiles(ctl, report, nil)
	if cmd.Path != "/path/to/toolgate" || cmd.Args[0] != supervisor.Arg0 {
		t.Fatalf("path %q args %q", cmd.Path, cmd.Args)
	}
	a, err := supervisor.ParseArgs(cmd.Args[1:])
	if err != nil {
		t.Fatal(err)
	}
	if a.Program != "/bin/cat" || !slices.Equal(a.Argv, []string{"/bin/cat", "-u"}) || a.Grace != stdioKillGrace || a.Files != 0 {
		t.Errorf("supervisor args %+v", a)
	}
	if len(cmd.ExtraFiles) != 2 || !slices.Contains(cmd.Env, "A=1") {
		t.Fatalf("extra files %v env %q", cmd.ExtraFiles, cmd.Env)
	}
	// The pipes connect: what the gateway writes on ctl the child reads on
	// fd 3, what the child writes on fd 4 the gateway reads on report.
	if _, err := ctl.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := cmd.ExtraFiles[0].Read(b); err != nil || b[0] != 1 {
		t.Errorf("control pipe: %v %v", b, err)
	}
	if _, err := cmd.ExtraFiles[1].Write([]byte("r")); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Read(b); err != nil || b[0] != 'r' {
		t.Errorf("report pipe: %v %v", b, err)
	}
	closeChildEnds(cmd)
	if _, err := cmd.ExtraFiles[0].Read(b); err == nil {
		t.Error("closeChildEnds left the child's end of the control pipe open")
	}
}
