package gateway

import (
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
)

// TestView: an agent's view is computed once per revision and shared; a
// new revision computes it anew; an agent holding nothing holds nothing.
func TestView(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say")
	v := e.g.view("a", "echo")
	if v != e.g.view("a", "echo") {
		t.Fatal("the view is not shared within a revision")
	}
	if !v.holds() || len(v.byName) != 1 || v.jobs || v.list == nil {
		t.Fatalf("view %+v", v)
	}
	for _, m := range []string{"cacheScope", "resultType", "ttlMs"} {
		if jsonrpc.Field(v.modernList, m) == nil {
			t.Errorf("the 2026-07-28 list lacks %s: %s", m, v.modernList)
		}
	}
	if e.g.view("a", "vault").holds() || e.g.view("nobody", "echo").holds() {
		t.Error("a view of nothing holds something")
	}
	e.write(t, "tool:vault:stash", "TOKEN")
	if err := e.g.Reload(t.Context(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	if e.g.view("a", "echo").holds() || !e.g.view("a", "vault").holds() {
		t.Error("views outlived the grants they were computed from")
	}
}
