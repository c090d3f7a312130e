package gateway

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestPinsStatus: without a lock nothing is hidden (and the list is [] in
// the status, not null); with one, a command changed since pinning is
// listed once with both digests and audited once, however often the
// gateway looks.
func TestPinsStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writePackWorkspace(t, dir, "First.")
	pinWorkspace(t, ws, nil)
	writePackWorkspace(t, dir, "Changed.")
	g, err := Open(context.Background(), ws, Options{Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	st := g.pinsStatus()
	if !st.Present || st.Pinned != 2 || len(st.Unpinned) != 1 {
		t.Fatalf("status %+v", st)
	}
	u := st.Unpinned[0]
	if u.Provider != "command" || u.Surface != "notes" || u.Tool != "show" || u.Status != "changed" || u.Pinned == "" || u.Live == "" || u.Pinned == u.Live {
		t.Errorf("unpinned %+v", u)
	}
	g.reportPins()
	g.reportPins()
	n := 0
	for _, ev := range events(t, g) {
		if ev.Action == "command:pin:notes:show" {
			n++
			if !strings.Contains(ev.Reason, u.Pinned) || !strings.Contains(ev.Reason, u.Live) {
				t.Errorf("the audit does not name both digests: %s", ev.Reason)
			}
		}
	}
	if n != 1 {
		t.Errorf("the changed definition was audited %d times, want once", n)
	}

	plain := openTestGateway(t, "")
	if st := plain.pinsStatus(); st.Present || st.Unpinned == nil || len(st.Unpinned) != 0 {
		t.Errorf("no lock: %+v", st)
	}
}
