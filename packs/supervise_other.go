//go:build !linux

package packs

// supervisorDefault is empty where the supervisor cannot work (it needs
// PR_SET_CHILD_SUBREAPER): commands are bounded by their process group.
const supervisorDefault = ""

// MaybeSupervise does nothing where there is no supervisor.
func MaybeSupervise() {}

// limitDirect cannot bound memory here.
func limitDirect(pid int, bytes int64) error { return nil }
