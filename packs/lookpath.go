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
		if executable(p) == nil {
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
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%q is not an executable file", path)
	}
	return nil
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
