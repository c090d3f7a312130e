//go:build linux

package state

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileEvents reports (coalesced) every write to a file in dir, through
// inotify: a commit of another process writes the WAL file, so an event
// says "look now". The event can arrive before the commit is visible
// (SQLite updates its WAL index after the write), which is why the watcher
// then looks again for a short while. ok is false where inotify is not
// available; stop ends it.
func fileEvents(dir string) (events <-chan struct{}, stop func(), ok bool) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, nil, false
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		return nil, nil, false
	}
	// A non-blocking fd goes through the runtime poller, so Close wakes a
	// Read in progress.
	f := os.NewFile(uintptr(fd), "inotify:"+dir)
	ch := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, func() { f.Close() }, true
}
