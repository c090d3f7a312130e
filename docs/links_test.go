package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// writtenElsewhere are documents this branch links to that another branch
// of the same change writes; the link is checked once the file exists.
var writtenElsewhere = map[string]bool{"approvals-team.md": true}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile("(?m)^#{1,6} +(.+?) *$")
)

// TestDocLinksStayInside: the README and every document link only to
// files of the repository that exist (and to headings they hold), never to
// the design brief outside it, and the README links to no web page.
func TestDocLinksStayInside(t *testing.T) {
	docs, _ := filepath.Glob("*.md")
	for _, f := range append(docs, "../README.md") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range linkProblems(f, string(data), f == "../README.md") {
			t.Error(p)
		}
	}
}

// TestDocLinksRefuse: each kind of bad link is reported.
func TestDocLinksRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ md, want string }{
		{"see [the brief](../../shared/DESIGN.md)", "outside the repository"},
		{"the design is in `../shared/DESIGN.md`", "design brief"},
		{"[x](nope.md)", "does not exist"},
		{"[x](docs/packs.md#no-such-heading)", "no heading"},
		{"[x](https://example.com)", "web page"},
	} {
		if got := strings.Join(linkProblems("../README.md", tc.md, true), "\n"); !strings.Contains(got, tc.want) {
			t.Errorf("%q: problems %q, want one containing %q", tc.md, got, tc.want)
		}
	}
	if got := linkProblems("../README.md", "[packs](docs/packs.md#step-4-lists-spread) and [grants](docs/grants.md#param_constraints)", true); len(got) > 0 {
		t.Errorf("good links refused: %q", got)
	}
}

func linkProblems(file, text string, readme bool) []string {
	var out []string
	if strings.Contains(text, "DESIGN.md") || strings.Contains(text, "../shared") {
		out = append(out, fmt.Sprintf("%s names the design brief outside the repository; cite a file of the repository (docs/*.md, a Go file) instead", file))
	}
	root, _ := filepath.Abs("..")
	for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			if readme {
				out = append(out, fmt.Sprintf("%s links to a web page (%s); the README points only inside the repository", file, target))
			}
			continue
		}
		path, anchor, _ := strings.Cut(target, "#")
		resolved := file
		if path != "" {
			resolved = filepath.Join(filepath.Dir(file), path)
		}
		abs, _ := filepath.Abs(resolved)
		if !strings.HasPrefix(abs, root+string(filepath.Separator)) {
			out = append(out, fmt.Sprintf("%s: link %s leads outside the repository", file, target))
			continue
		}
		data, err := os.ReadFile(resolved)
		if err != nil {
			if !writtenElsewhere[filepath.Base(resolved)] {
				out = append(out, fmt.Sprintf("%s: link %s: %s does not exist", file, target, resolved))
			}
			continue
		}
		if anchor != "" && !hasHeading(string(data), anchor) {
			out = append(out, fmt.Sprintf("%s: link %s: %s has no heading whose anchor is #%s", file, target, resolved, anchor))
		}
	}
	return out
}

// hasHeading reports whether doc has a heading whose GitHub anchor is
// anchor: lowercased, punctuation other than '-' and '_' dropped, spaces
// turned into '-'.
func hasHeading(doc, anchor string) bool {
	for _, m := range headingRE.FindAllStringSubmatch(doc, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}
