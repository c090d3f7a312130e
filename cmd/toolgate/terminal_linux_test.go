package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestIsTerminal: only a real terminal (a pseudo-terminal opened here)
// gets coloured log lines; /dev/null is a character device but no
// terminal, and a pipe, a file or a buffer are plain.
func TestIsTerminal(t *testing.T) {
	t.Parallel()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { devnull.Close() })
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	file, err := os.Create(t.TempDir() + "/log.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	tty := openPTY(t)
	for _, tc := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"pseudo-terminal", tty, true},
		{"/dev/null", devnull, false},
		{"pipe", pw, false},
		{"regular file", file, false},
		{"buffer", &bytes.Buffer{}, false},
	} {
		if got := isTerminal(tc.w); got != tc.want {
			t.Errorf("%s: isTerminal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// openPTY opens the follower side of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	leader, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { leader.Close() })
	fd := int(leader.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	follower, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal's follower: %v", err)
	}
	t.Cleanup(func() { follower.Close() })
	return follower
}
