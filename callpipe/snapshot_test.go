package callpipe

import (
	"context"
	"strings"
	"testing"
)

func TestSnapshotContext(t *testing.T) {
	t.Parallel()
	if SnapshotFrom(context.Background()) != nil {
		t.Error("a snapshot outside a call")
	}
	s := &Snapshot{Revision: "r1"}
	if SnapshotFrom(withSnapshot(context.Background(), s)) != s {
		t.Error("snapshot lost")
	}
	if h := approveHint(nil, "a1"); !strings.Contains(h, "toolgate approvals approve a1") {
		t.Errorf("default hint %q", h)
	}
	if h := approveHint(&Snapshot{ApproveHint: func(id string) string { return "approve " + id + " there" }}, "a2"); h != "approve a2 there" {
		t.Errorf("hint %q", h)
	}
}
