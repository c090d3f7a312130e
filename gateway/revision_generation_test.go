package gateway

import (
	"context"
	"regexp"
	"testing"
)

// TestReloadGenerations: the revision in force carries the generation the
// shared store numbers it with: a reload of unchanged content keeps it,
// an edit takes the next, and reverting the edit takes another again —
// so an approval given before the edit does not run after the revert,
// though the file is byte for byte the one it was given under.
func TestReloadGenerations(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say, tool:vault:stash")
	gen := func() int64 { return e.g.rev.Load().snap.Generation }
	reload := func(grants string) {
		t.Helper()
		e.write(t, grants, "TOKEN")
		if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
			t.Fatal(err)
		}
	}
	first := gen()
	if first < 1 {
		t.Fatalf("first generation %d", first)
	}
	args := map[string]any{"item": "x"}
	id := regexp.MustCompile(`ap-[0-9a-f]+`).FindString(resultText(callPack(t, e.g, "a", "vault", "stash", args)))
	if id == "" {
		t.Fatal("the strict call opened no approval")
	}
	if _, err := e.g.approvals.Approve(id, "operator"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		grants string
		want   int64
	}{
		{"tool:echo:say, tool:vault:stash", first},     // unchanged (a SIGHUP)
		{"tool:vault:stash, tool:echo:say", first + 1}, // edited
		{"tool:echo:say, tool:vault:stash", first + 2}, // reverted
	}
	for i, st := range steps {
		reload(st.grants)
		if got := gen(); got != st.want {
			t.Fatalf("step %d: generation %d, want %d", i, got, st.want)
		}
		if shown := e.g.Status().Reload.Generation; shown != st.want {
			t.Fatalf("step %d: /admin/status shows generation %d, want %d", i, shown, st.want)
		}
	}
	res := callPack(t, e.g, "a", "vault", "stash", args)
	if again := regexp.MustCompile(`ap-[0-9a-f]+`).FindString(resultText(res)); !res.IsError || again == "" || again == id {
		t.Fatalf("after the revert the approved call: %q, want a new pending request", resultText(res))
	}
}
