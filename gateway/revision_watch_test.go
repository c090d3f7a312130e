package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/workspace"
)

// TestWatchWorkspace: a file saved by rename-into-place is reloaded
// without a signal; a broken save is tried once and leaves the old
// revision, and fixing it reloads again.
func TestWatchWorkspace(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.g.WatchWorkspace(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitStatus := func(what string, ok func(ReloadStatus) bool) ReloadStatus {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if st := e.g.Status().Reload; ok(st) {
				return st
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s: %+v", what, e.g.Status().Reload)
		return ReloadStatus{}
	}
	e.write(t, "tool:vault:stash", "TOKEN")
	waitStatus("the edit to load", func(st ReloadStatus) bool { return st.Reloads == 1 })
	if res := callPack(t, e.g, "a", "echo", "say", map[string]any{"n": "1"}); !res.IsError {
		t.Fatal("removed grant still in force after the watched reload")
	}
	writeAtomically(t, e.path, "version: 1\nagents: [\n")
	st := waitStatus("the broken save to be refused", func(st ReloadStatus) bool { return st.Error != "" })
	if st.LastTrigger != ReloadFile {
		t.Fatalf("trigger %q", st.LastTrigger)
	}
	e.write(t, "tool:echo:say", "TOKEN")
	waitStatus("the fix to load", func(st ReloadStatus) bool { return st.Reloads == 2 && st.Error == "" })
	if res := callPack(t, e.g, "a", "echo", "say", map[string]any{"n": "1"}); res.IsError {
		t.Fatalf("grant given back not in force: %s", resultText(res))
	}
	if n := len(reloadEvents(t, e.g)); n != 3 {
		t.Fatalf("%d reload events, want 3 (reloaded, refused once, reloaded)", n)
	}
	// Refused again, then the file in force put back byte for byte: the
	// error clears with no reload and no signal.
	inForce, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	writeAtomically(t, e.path, "version: 1\nagents: [\n")
	waitStatus("the second broken save to be refused", func(st ReloadStatus) bool { return st.Error != "" })
	writeAtomically(t, e.path, string(inForce))
	st = waitStatus("the restored file to clear the error", func(st ReloadStatus) bool { return st.Error == "" && st.RefusedRevision == "" })
	if st.Reloads != 2 {
		t.Errorf("restoring the file in force reloaded it (%d reloads, want 2)", st.Reloads)
	}
}

func TestFileRevision(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if rev := fileRevision(path); !strings.HasPrefix(rev, "unreadable: ") {
		t.Errorf("a missing file: %q", rev)
	}
	if err := os.WriteFile(path, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if rev := fileRevision(path); rev != ws.Revision {
		t.Errorf("fileRevision %q, the workspace's revision %q", rev, ws.Revision)
	}
}
