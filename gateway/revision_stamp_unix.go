//go:build unix

package gateway

import (
	"os"
	"syscall"
)

// stampOf stats path, following symlinks (a ConfigMap's ..data swap
// changes the file the name leads to, hence its inode).
func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	st := fileStamp{ok: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino, st.dev = uint64(sys.Ino), uint64(sys.Dev)
	}
	return st
}
