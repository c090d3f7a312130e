//go:build !unix && !windows

package audit

import (
	"errors"
	"os"
)

// errNoLocking fails appends closed on platforms without file locking, since
// unsynchronised writers would corrupt the chain.
var errNoLocking = errors.New("file locking is not supported on this platform, so the audit log cannot be shared safely")

func lockFile(*os.File) error   { return errNoLocking }
func unlockFile(*os.File) error { return nil }
