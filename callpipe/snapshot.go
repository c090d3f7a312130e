package callpipe

import (
	"context"
	"fmt"
)

type snapshotKey struct{}

// withSnapshot records in ctx the snapshot a call is being decided with,
// so an executor resolves what it runs from the same revision.
func withSnapshot(ctx context.Context, s *Snapshot) context.Context {
	return context.WithValue(ctx, snapshotKey{}, s)
}

// SnapshotFrom returns the snapshot the call carried by ctx is decided
// with, or nil outside Pipeline.Call. An executor compares it with the
// revision in force, so a reload between the decision and Prepare cannot
// make it run what another revision declared.
func SnapshotFrom(ctx context.Context) *Snapshot {
	s, _ := ctx.Value(snapshotKey{}).(*Snapshot)
	return s
}

// approveHint names how an operator approves request id.
func approveHint(snap *Snapshot, id string) string {
	if snap != nil && snap.ApproveHint != nil {
		return snap.ApproveHint(id)
	}
	return fmt.Sprintf("`toolgate approvals approve %s` or in the console at /ui", id)
}
