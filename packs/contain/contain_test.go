//go:build linux

package contain

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// TestNativeHelperMatchesSource: the helper bytes are what its source
// assembles to (GNU as and ld; fails under CI when they are missing).
func TestNativeHelperMatchesSource(t *testing.T) {
	t.Parallel()
	if nativeHelper == "" {
		t.Skip("no native helper on this architecture")
	}
	for _, tool := range []string{"as", "ld"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed to check the helper against its source", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	obj, bin := filepath.Join(dir, "h.o"), filepath.Join(dir, "h")
	for _, argv := range [][]string{
		{"as", "--64", "-o", obj, "testdata/helper_amd64.S"},
		{"ld", "-static", "-nostdlib", "-s", "--build-id=none", "-z", "noseparate-code", "-z", "max-page-size=4096", "-o", bin, obj},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	got, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(nativeHelper)) {
		t.Errorf("testdata/helper_amd64.S assembles to %d bytes that differ from nativeHelper (%d bytes): regenerate helper_amd64.go", len(got), len(nativeHelper))
	}
}

// TestExitReport: the records a helper writes read back as the command's
// exit; a report cut short or empty says the helper ended without one.
func TestExitReport(t *testing.T) {
	t.Parallel()
	rec := func(tag, v uint32) []byte {
		b := make([]byte, supervisor.RecordSize)
		binary.LittleEndian.PutUint32(b, tag)
		binary.LittleEndian.PutUint32(b[4:], v)
		return b
	}
	for _, tc := range []struct {
		name   string
		report []byte
		want   string
	}{
		{"exit 0", rec(supervisor.RecordStatus, 0), ""},
		{"exit 3", rec(supervisor.RecordStatus, 3<<8), "exit status 3"},
		{"signal", rec(supervisor.RecordStatus, uint32(syscall.SIGTERM)), "signal: terminated"},
		{"exec failed", append(rec(supervisor.RecordExecFailed, uint32(syscall.ENOENT)), rec(supervisor.RecordStatus, 127<<8)...), "executing /bin/x: no such file or directory"},
		{"limit failed", rec(supervisor.RecordLimitFailed, uint32(syscall.EPERM)), "setting max_memory (RLIMIT_AS): operation not permitted"},
		{"no report", nil, "ended without a report"},
		{"cut short", rec(supervisor.RecordStatus, 0)[:5], "ended without a report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			_, _ = w.Write(tc.report)
			w.Close()
			tr := &Tree{report: r, program: "/bin/x"}
			defer r.Close()
			err = tr.Exit().Err()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want success", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want && !bytes.Contains([]byte(err.Error()), []byte(tc.want))):
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": ModeAuto, "auto": ModeAuto, "cgroup": ModeCgroup, "session": ModeSession} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("container"); err == nil {
		t.Error("ParseMode accepted an unknown mode")
	}
}
