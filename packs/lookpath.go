package packs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// lookPathIn finds program the way execvp would, but in the PATH the
// command will run with rather than the gateway's own. A program path with
// a slash is taken as written (relative to dir, as exec will run it).
// Relative PATH entries are skipped so that the working directory never
// supplies a program found by name.
func lookPathIn(program, pathList, dir string) (string, error) {
	if strings.Contains(program, "/") {
		check := program
		if !filepath.IsAbs(program) && dir != "" {
			check = filepath.Join(dir, program)
		}
		if err := executable(check); err != nil {
			return "", err
		}
		return program, nil
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, program)
		if fi, err := os.Stat(p); err == nil && isExecutable(fi) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on PATH (%s); install it or add its directory to PATH", program, pathList)
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%q: %w", path, err)
	}
	if !isExecutable(fi) {
		return fmt.Errorf("%q is not an executable file", path)
	}
	return nil
}

// isExecutable reports whether fi is a file someone may execute. The PATH
// walk checks with it, so that a directory without the program costs one
// stat and no error value (a call looks through every PATH entry before
// its program's).
func isExecutable(fi os.FileInfo) bool {
	return !fi.IsDir() && fi.Mode()&0o111 != 0
}

// envValue returns the value of key in a KEY=VALUE list.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
