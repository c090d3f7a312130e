//go:build !linux

package contain

import "os"

// ChildPipe is a pipe whose write end goes to a child (os.Pipe here).
func ChildPipe() (r, w *os.File, err error) { return os.Pipe() }
