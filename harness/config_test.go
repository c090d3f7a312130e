package harness

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

var update = flag.Bool("update", false, "rewrite golden files")

func load(t *testing.T, path string) (*workspace.Workspace, *grantcheck.Policy) {
	t.Helper()
	ws, err := workspace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grantcheck.Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	return ws, p
}

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./harness -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestConfigGolden(t *testing.T) {
	t.Parallel()
	ws, p := load(t, "testdata/toolgate.yaml")
	for _, h := range Harnesses() {
		for _, mode := range []Mode{ModeStdio, ModeHTTP} {
			if h == Cline && mode == ModeHTTP {
				continue // refused: TestConfigErrors
			}
			t.Run(string(h)+"-"+string(mode), func(t *testing.T) {
				t.Parallel()
				got, err := Config(ConfigOptions{Harness: h, Mode: mode, Agent: "reader", Workspace: ws, Policy: p,
					WorkspacePath: "/work/toolgate.yaml", Command: "/usr/local/bin/toolgate"})
				if err != nil {
					t.Fatal(err)
				}
				ext := ".json"
				if h == Codex {
					ext = ".toml"
				}
				golden(t, "config/"+string(h)+"-"+string(mode)+ext, got)
			})
		}
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	ws, p := load(t, "testdata/toolgate.yaml")
	long, lp := load(t, "testdata/longname.yaml")
	coll, cp := load(t, "testdata/collide.yaml")
	cases := []struct {
		name  string
		o     ConfigOptions
		wants []string
	}{
		{"file token over http", ConfigOptions{Harness: Claude, Mode: ModeHTTP, Agent: "filetoken", Workspace: ws, Policy: p},
			[]string{`agent "filetoken" reads its token from a file`, "--mode stdio", "{env: VAR}"}},
		{"no token over http", ConfigOptions{Harness: Codex, Mode: ModeHTTP, Agent: "notoken", Workspace: ws, Policy: p},
			[]string{`agent "notoken" has no token`, "--mode stdio"}},
		{"no grant", ConfigOptions{Harness: Claude, Mode: ModeStdio, Agent: "nogrant", Workspace: ws, Policy: p},
			[]string{`agent "nogrant" holds no tool`}},
		{"unknown agent", ConfigOptions{Harness: Claude, Mode: ModeStdio, Agent: "ghost", Workspace: ws, Policy: p},
			[]string{`"ghost"`}},
		{"unknown mode", ConfigOptions{Harness: Claude, Mode: "sse", Agent: "reader", Workspace: ws, Policy: p},
			[]string{`unknown mode "sse"`}},
		{"name too long", ConfigOptions{Harness: Claude, Mode: ModeStdio, Agent: "long", Workspace: long, Policy: lp},
			[]string{"mcp__a-surface-id-that-is-rather-long__a-command-whose-name-is-far-too-long", "64"}},
		{"codex namespace collision", ConfigOptions{Harness: Codex, Mode: ModeStdio, Agent: "dups", Workspace: coll, Policy: cp},
			[]string{"surface dup-x and surface dup_x", `"mcp__dup_x"`, "codex", "rename"}},
		{"gemini name collision", ConfigOptions{Harness: Gemini, Mode: ModeStdio, Agent: "overlap", Workspace: coll, Policy: cp},
			[]string{"tool a:b_x and tool a_b:x", `"mcp_a_b_x"`}},
		{"cline over http", ConfigOptions{Harness: Cline, Mode: ModeHTTP, Agent: "reader", Workspace: ws, Policy: p},
			[]string{"cline does not expand environment variables", "never prints", "--mode stdio"}},
		{"opencode name collision", ConfigOptions{Harness: OpenCode, Mode: ModeStdio, Agent: "overlap", Workspace: coll, Policy: cp},
			[]string{"tool a:b_x and tool a_b:x", `"a_b_x"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.o.WorkspacePath, tc.o.Command = "/w/toolgate.yaml", "toolgate"
			_, err := Config(tc.o)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestAllowedTools(t *testing.T) {
	t.Parallel()
	_, p := load(t, "testdata/toolgate.yaml")
	got, err := AllowedTools(p, "reader")
	if err != nil {
		t.Fatal(err)
	}
	want := "mcp__json-tools__query,mcp__json-tools__keys,mcp__json-tools__validate,mcp__json-tools__edit-in-place,mcp__memory"
	if strings.Join(got, ",") != want {
		t.Errorf("AllowedTools = %s\nwant %s", strings.Join(got, ","), want)
	}
	if _, err := AllowedTools(p, "nogrant"); err == nil || !strings.Contains(err.Error(), "holds no grant") {
		t.Errorf("nogrant: err = %v", err)
	}
	_, lp := load(t, "testdata/longname.yaml")
	if _, err := AllowedTools(lp, "long"); err == nil || !strings.Contains(err.Error(), "a-command-whose-name-is-far-too-long") {
		t.Errorf("long name: err = %v", err)
	}
}

func TestLoopbackListen(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "127.0.0.1:7330", "0.0.0.0:80": "127.0.0.1:80", "[::]:9": "127.0.0.1:9",
		"127.0.0.1:7330": "127.0.0.1:7330", "gw.internal:7000": "gw.internal:7000", ":7001": "127.0.0.1:7001"} {
		if got := loopbackListen(in); got != want {
			t.Errorf("loopbackListen(%q) = %q, want %q", in, got, want)
		}
	}
}

// A Codex tool timeout shorter than toolgate's approval wait would turn
// "approval pending" into a harness timeout: a long wait raises it.
func TestCodexToolTimeoutCoversTheApprovalWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		wait time.Duration
		want string // "" for no tool_timeout_sec
	}{
		{0, ""},
		{30 * time.Second, ""},
		{45 * time.Second, "tool_timeout_sec = 75\n"},
		{2*time.Minute + 500*time.Millisecond, "tool_timeout_sec = 151\n"},
	} {
		ws, p := load(t, "testdata/toolgate.yaml")
		ws.Gateway.Approvals.Wait = workspace.Duration(tc.wait)
		got, err := Config(ConfigOptions{Harness: Codex, Mode: ModeStdio, Agent: "reader", Workspace: ws, Policy: p,
			WorkspacePath: "/w/toolgate.yaml", Command: "toolgate"})
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(got), "tool_timeout_sec")
		switch {
		case tc.want == "" && n != 0:
			t.Errorf("wait %s: unexpected tool_timeout_sec:\n%s", tc.wait, got)
		case tc.want != "" && strings.Count(string(got), tc.want) != 2:
			t.Errorf("wait %s: want %q on both servers:\n%s", tc.wait, tc.want, got)
		}
	}
}
