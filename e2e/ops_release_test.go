package e2e

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOpsReleaseBuild runs scripts/build-release.sh — the image's build
// stage, which is all of the image these machines can build — and checks
// that what it makes is one static binary (no ELF interpreter: it runs on
// any base image, or none) that says which revision it was built from.
func TestOpsReleaseBuild(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	out := filepath.Join(t.TempDir(), "toolgate")
	cmd := exec.Command("sh", filepath.Join(root, "scripts", "build-release.sh"), out)
	cmd.Dir = t.TempDir() // the script finds the repository itself
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build-release.sh: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: it is not static", out)
		}
	}
	if lib, _ := f.ImportedLibraries(); len(lib) > 0 {
		t.Errorf("%s links %v: it is not static", out, lib)
	}
	v, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", out, err)
	}
	line := strings.TrimSpace(string(v))
	if !strings.HasPrefix(line, "toolgate ") {
		t.Errorf("version line %q", line)
	}
	if rev, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
		if want := "revision " + strings.TrimSpace(string(rev)); !strings.Contains(line, want) {
			t.Errorf("version line %q does not name the checkout's %s", line, want)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("git rev-parse HEAD: %v (CI runs in a checkout)", err)
	}
}

// TestOpsDockerfile: the Dockerfile builds with the script the test above
// runs, and its image matches what deploy/kubernetes/ expects of it — the
// image the Deployment names is the one docs/deploy.md builds and pushes,
// it runs as the Deployment's non-root user, and it carries the programs
// the bundled packs other than the coding agents need.
func TestOpsDockerfile(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	df, deploy, docs := read("Dockerfile"), read("deploy/kubernetes/deployment.yaml"), read("docs/deploy.md")
	if n := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(df, -1); len(n) < 2 {
		t.Errorf("the Dockerfile has %d stages, want a build stage and a run stage", len(n))
	}
	if !strings.Contains(df, "RUN scripts/build-release.sh") {
		t.Error("the Dockerfile's build stage does not run scripts/build-release.sh (the tested commands)")
	}
	img := regexp.MustCompile(`image: (\S+)`).FindStringSubmatch(deploy)
	if img == nil {
		t.Fatal("deployment.yaml names no image")
	}
	for _, want := range []string{"docker build -t " + img[1], "docker push " + img[1]} {
		if !strings.Contains(docs, want) {
			t.Errorf("docs/deploy.md lacks %q for the image the Deployment runs", want)
		}
	}
	user := regexp.MustCompile(`runAsUser: (\d+)`).FindStringSubmatch(deploy)
	if user == nil || !regexp.MustCompile(`(?m)^USER `+user[1]+`(:|$)`).MatchString(df) {
		t.Errorf("the image does not run as the Deployment's user %v", user)
	}
	if regexp.MustCompile(`(?m)^USER (0|root)\b`).MatchString(df) {
		t.Error("the image runs as root")
	}
	install := regexp.MustCompile(`apk add[^\n]*(\\\n[^\n]*)*`).FindAllString(df, -1)
	for _, pkg := range []string{"jq", "git", "ripgrep", "github-cli", "ca-certificates"} {
		if !regexp.MustCompile(`\b` + pkg + `\b`).MatchString(strings.Join(install[1:], " ")) {
			t.Errorf("the run stage does not install %s", pkg)
		}
	}
}
