//go:build !unix

package gateway

import "os"

// stampOf stats path: size and modification time where there are no
// inode numbers.
func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{ok: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
