package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCodexReadsTheCorpus holds the real Codex CLI to the verdicts of
// harness/testdata/codex-config (which harness.TestReadCodexConfig holds
// toolgate to): `codex mcp list --json` over each file as config.toml
// refuses what the file's first line says is refused — at the same line
// when Codex names one, else at a key path toolgate's message starts
// with — and lists the servers it says are read, enabled as it says.
// What mcp-config writes (harness/testdata/config/codex-*.toml) is read
// with every server enabled. Offline: mcp list starts no server.
func TestCodexReadsTheCorpus(t *testing.T) {
	t.Parallel()
	codex := harnessCLI(t, "codex", "codex", "codex.sh")
	root := repoRoot(t)
	corpus, _ := filepath.Glob(filepath.Join(root, "harness", "testdata", "codex-config", "*.toml"))
	written, _ := filepath.Glob(filepath.Join(root, "harness", "testdata", "config", "codex-*.toml"))
	if len(corpus) == 0 || len(written) == 0 {
		t.Fatalf("no corpus under harness/testdata (%d, %d files)", len(corpus), len(written))
	}
	lineRE := regexp.MustCompile(`config\.toml:(\d+):\d+: `)
	keyRE := regexp.MustCompile("\n\\s*in `([^`]+)`")
	for _, path := range append(corpus, written...) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		name := filepath.Base(path)
		home := t.TempDir()
		writeFile(t, home, "config.toml", string(data))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, codex, "mcp", "list", "--json")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home, "LANG=C.UTF-8", "TERM=dumb"}
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr := cmd.Run()
		cancel()
		refused, want, _ := strings.Cut(strings.TrimPrefix(first, "# want refused "), ": ")
		switch {
		case strings.HasPrefix(first, "# want refused "):
			if runErr == nil {
				t.Errorf("%s: Codex read it, toolgate refuses it (%s):\n%s", name, first, stdout.String())
				continue
			}
			if m := lineRE.FindStringSubmatch(stderr.String()); m != nil && m[1] != refused {
				t.Errorf("%s: Codex refuses at line %s, toolgate at %s:\n%s", name, m[1], refused, stderr.String())
			} else if k := keyRE.FindStringSubmatch(stderr.String()); m == nil && (k == nil || !strings.HasPrefix(want, k[1])) {
				t.Errorf("%s: Codex refuses it at neither a line nor a key toolgate names (%q):\n%s", name, want, stderr.String())
			}
		default:
			if runErr != nil {
				t.Errorf("%s: Codex refuses it, toolgate reads it: %v\n%s", name, runErr, stderr.String())
				continue
			}
			var listed []struct {
				Name    string `json:"name"`
				Enabled bool   `json:"enabled"`
			}
			if err := json.Unmarshal([]byte(stdout.String()), &listed); err != nil {
				t.Errorf("%s: codex mcp list --json: %v\n%s", name, err, stdout.String())
				continue
			}
			var enabled []string
			for _, s := range listed {
				if s.Enabled {
					enabled = append(enabled, s.Name)
				}
			}
			wantEnabled := strings.Fields(strings.TrimPrefix(first, "# want read:"))
			if !strings.HasPrefix(first, "# want read:") { // mcp-config's output: every server
				wantEnabled = nil
				for _, s := range listed {
					wantEnabled = append(wantEnabled, s.Name)
				}
				if n := strings.Count(string(data), "\n[mcp_servers.") + 1; len(listed) != n {
					t.Errorf("%s: Codex lists %d servers, the file has %d", name, len(listed), n)
				}
			}
			slices.Sort(enabled)
			slices.Sort(wantEnabled)
			if !slices.Equal(enabled, wantEnabled) {
				t.Errorf("%s: Codex enables %v, toolgate %v", name, enabled, wantEnabled)
			}
		}
		t.Logf("%s: codex agrees (%s)", name, strconv.Quote(first))
	}
}
