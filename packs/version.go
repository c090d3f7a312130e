package packs

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/Masterminds/semver/v3"
)

// versionRE finds the first x.y[.z] number in a tool's version banner, such
// as "jq-1.7.1", "git version 2.39.5" or "v20.1.0". The leading class keeps
// it from starting in the middle of a longer number.
var versionRE = regexp.MustCompile(`(?:^|[^0-9.])v?(\d+)\.(\d+)(?:\.(\d+))?`)

// ParseVersion extracts the first x.y[.z] token of a version banner as a
// semantic version (a missing patch is 0). Tools print their versions in
// many shapes, so the search is tolerant: prefixes, dates and build details
// around the number are ignored, and pre-release suffixes are dropped.
func ParseVersion(output string) (*semver.Version, error) {
	for _, m := range versionRE.FindAllStringSubmatch(output, -1) {
		var parts [3]uint64
		ok := true
		for i, s := range m[1:] {
			if s == "" {
				continue
			}
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				ok = false
				break
			}
			parts[i] = n
		}
		if ok {
			return semver.New(parts[0], parts[1], parts[2], "", ""), nil
		}
	}
	return nil, fmt.Errorf("no version number (x.y or x.y.z) in %q", firstLine(output, 80))
}

// firstLine returns the first line of s, cut to at most max bytes, for
// error messages that quote a program's output.
func firstLine(s string, max int) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			s = s[:i]
			break
		}
	}
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}
