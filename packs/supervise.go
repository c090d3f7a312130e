package packs

import "github.com/toolgate/toolgate/packs/supervisor"

// MaybeSupervise runs one of the programs toolgate re-executes itself as
// (package supervisor: the containment watcher, the portable helper, the
// memory-limit shim) when the process was started as one of them, and
// exits; otherwise it returns at once. Importing packs already does this
// (package supervisor's init); calling it first thing in main says so
// where a reader looks.
func MaybeSupervise() { supervisor.MaybeRun() }
