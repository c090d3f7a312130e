//go:build linux

package contain

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// cgroupPrefix starts the name of every gateway's cgroup directory:
// toolgate-<pid>-<random>.
const cgroupPrefix = "toolgate-"

// makeCgroupParent creates this process's cgroup directory beside itself
// in the cgroup v2 hierarchy (below the cgroup it runs in), checks that
// the helper at helperPath can be started into a cgroup below it and that
// cgroup.kill works there, and removes what gateways that died without
// cleaning up left behind.
func makeCgroupParent(self int, helperPath string) (string, error) {
	base, err := ownCgroupDir()
	if err != nil {
		return "", err
	}
	removeStale(base)
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(base, cgroupPrefix+strconv.Itoa(self)+"-"+hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating a cgroup: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = syscall.Rmdir(dir)
		return "", fmt.Errorf("this kernel has no cgroup.kill (Linux 5.14): %w", err)
	}
	probeDir := filepath.Join(dir, "probe")
	fd, err := openCgroup(probeDir)
	if err == nil {
		err = probe(helperPath, fd)
		unix.Close(fd)
		_ = syscall.Rmdir(probeDir)
	}
	if err != nil {
		_ = syscall.Rmdir(dir)
		return "", fmt.Errorf("starting a process into a cgroup: %w", err)
	}
	return dir, nil
}

// openCgroup creates cgroup directory dir and opens it for
// CLONE_INTO_CGROUP.
func openCgroup(dir string) (int, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return -1, fmt.Errorf("creating the command's cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = syscall.Rmdir(dir)
		return -1, fmt.Errorf("opening the command's cgroup: %w", err)
	}
	return fd, nil
}

// ownCgroupDir is the directory of this process's cgroup in the cgroup v2
// hierarchy: its path in /proc/self/cgroup ("0::/path") below the
// hierarchy's mount point in /proc/self/mountinfo.
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	var path string
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path, found = p, true
		}
	}
	if !found {
		return "", errors.New("this process is in no cgroup v2 hierarchy")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) < 5 {
			continue
		}
		root, mount := fields[3], unescapeMount(fields[4])
		rel, ok := strings.CutPrefix(path, root)
		if !ok {
			continue // this mount shows another part of the hierarchy
		}
		return filepath.Join(mount, rel), nil
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

// unescapeMount undoes the octal escapes of a mountinfo path (\040 for a
// space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeStale kills and removes the cgroup directories below base that
// belong to gateways no longer running (a gateway and its watcher both
// killed outright).
func removeStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		supervisor.KillCgroupTree(filepath.Join(base, e.Name()), time.Second)
	}
}
