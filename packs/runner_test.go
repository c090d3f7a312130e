package packs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/workspace"
)

// TestRunJQ runs the bundled json-tools commands with real jq, including the
// injection case: a filter carrying shell syntax is one inert jq argument
// that jq rejects as an ordinary compile error.
func TestRunJQ(t *testing.T) {
	t.Parallel()
	jq := bundledJQ(t)
	dir := t.TempDir()
	sentinel := filepath.Join(dir, "sentinel")
	if err := os.WriteFile(sentinel, []byte("still here"), 0o644); err != nil {
		t.Fatal(err)
	}
	const sample = "testdata/sample.json"
	tests := []struct {
		name       string
		command    string
		args       map[string]any
		exit       int // -1: any non-zero status
		stdout     string
		structured any
		stderr     string
	}{
		{name: "query", command: "query", args: map[string]any{"filter": ".name", "file": sample}, stdout: "\"toolgate\"\n"},
		{name: "keys parse json", command: "keys", args: map[string]any{"file": sample}, stdout: "[\"name\",\"tags\",\"version\"]\n",
			structured: []any{"name", "tags", "version"}},
		{name: "rm -rf / is a jq syntax error", command: "query", args: map[string]any{"filter": "; rm -rf /", "file": sample}, exit: 3, stderr: "compile error"},
		{name: "rm sentinel", command: "query", args: map[string]any{"filter": "; rm -rf " + sentinel, "file": sample}, exit: 3, stderr: "compile error"},
		{name: "command substitution", command: "query", args: map[string]any{"filter": "$(rm " + sentinel + ")", "file": sample}, exit: 3, stderr: "compile error"},
		{name: "backticks", command: "query", args: map[string]any{"filter": "`rm " + sentinel + "`", "file": sample}, exit: 3, stderr: "compile error"},
		{name: "pipe to a program", command: "query", args: map[string]any{"filter": ". | rm " + sentinel, "file": sample}, exit: 3, stderr: "compile error"},
		{name: "missing file", command: "query", args: map[string]any{"filter": ".", "file": filepath.Join(dir, "nope.json")}, exit: 2, stderr: "Could not open"},
		{name: "validate fails on bad JSON", command: "validate", args: map[string]any{"file": "testdata/requires/valid.yaml"}, exit: -1, stderr: "parse error"},
	}
	r := newTestRunner(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := mustRun(t, r, jq, commandOf(t, jq, tt.command), tt.args)
			if res.ExitCode != tt.exit && (tt.exit != -1 || res.ExitCode <= 0) {
				t.Fatalf("exit %d, want %d (stderr %q)", res.ExitCode, tt.exit, res.StderrTail)
			}
			if tt.exit == 0 && res.Err != "" || tt.exit != 0 && !strings.Contains(res.Err, "exit status") {
				t.Errorf("Err = %q for exit %d", res.Err, tt.exit)
			}
			if tt.exit == 0 && string(res.Stdout) != tt.stdout {
				t.Errorf("stdout %q, want %q", res.Stdout, tt.stdout)
			}
			if !reflect.DeepEqual(res.Structured, tt.structured) {
				t.Errorf("structured %#v, want %#v", res.Structured, tt.structured)
			}
			if b, _ := os.ReadFile(sentinel); string(b) != "still here" {
				t.Fatalf("sentinel file damaged by filter %q", tt.args["filter"])
			}
			if !strings.Contains(res.StderrTail, tt.stderr) {
				t.Errorf("stderr %q does not mention %q", res.StderrTail, tt.stderr)
			}
		})
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(sentinel); err != nil || string(b) != "still here" {
			t.Errorf("sentinel file damaged by an injection attempt: %v", err)
		}
	})
}

func TestRunParseJSONFallsBackToText(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	tests := []struct {
		name   string
		filter string
		stdout string
		note   string
	}{
		{"not JSON", ".name", "toolgate\n", "output was not valid JSON; returned as text: invalid character"},
		{"a stream of values", ".tags[]", "a\nb\n", "output was not valid JSON; returned as text: invalid character"},
		{"two JSON values", ".version, .version", "1\n1\n", "more than one JSON value"},
		{"empty", "empty", "", "the output was empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := command("raw", "jq", "-r", "{filter}", "testdata/sample.json")
			c.Output.Parse = "json"
			res := mustRun(t, r, packOf(c), c, map[string]any{"filter": tt.filter})
			if res.Err != "" || res.Structured != nil {
				t.Fatalf("Err %q, Structured %#v: want a successful text result", res.Err, res.Structured)
			}
			if string(res.Stdout) != tt.stdout || !strings.Contains(res.ParseNote, tt.note) {
				t.Errorf("stdout %q note %q; want %q and a note containing %q", res.Stdout, res.ParseNote, tt.stdout, tt.note)
			}
		})
	}
}

func TestRunRedactsCredentials(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-t0ken-value"
	creds := map[string]string{"tok": secret, "tiny": "abc", "tok-long": secret + "-and-more"}
	r := newTestRunner(t, creds)
	withEnv := func(c *workspace.Command) *workspace.CommandPack {
		p := packOf(c)
		p.Env = map[string]string{"TOKEN": "{credential.tok}", "LONG": "{credential.tok-long}"}
		return p
	}
	t.Run("stdout", func(t *testing.T) {
		t.Parallel()
		c := command("env", "printenv", "TOKEN", "LONG")
		res := mustRun(t, r, withEnv(c), c, nil)
		if want := "[REDACTED:tok]\n[REDACTED:tok-long]\n"; string(res.Stdout) != want {
			t.Errorf("stdout %q, want %q", res.Stdout, want)
		}
	})
	t.Run("stderr and argv", func(t *testing.T) {
		t.Parallel()
		c := command("echo-err", "sh", "-c", `echo "failed with $TOKEN and {x}" >&2; exit 4`, "{x}")
		res := mustRun(t, r, withEnv(c), c, map[string]any{"x": "abc " + secret})
		if res.ExitCode != 4 || res.StderrTail != "failed with [REDACTED:tok] and abc [REDACTED:tok]\n" {
			t.Errorf("exit %d stderr %q", res.ExitCode, res.StderrTail)
		}
		if got := res.Argv[len(res.Argv)-1]; got != "abc [REDACTED:tok]" {
			t.Errorf("argv not redacted: %q (short credential values stay as they are)", got)
		}
	})
	t.Run("structured with escapes", func(t *testing.T) {
		t.Parallel()
		c := command("json", "printf", "%s", "{json}")
		c.Output.Parse = "json"
		doc := `{"` + secret + `": "\u0073` + secret[1:] + `"}`
		res := mustRun(t, r, withEnv(c), c, map[string]any{"json": doc})
		want := map[string]any{"[REDACTED:tok]": "[REDACTED:tok]"}
		if !reflect.DeepEqual(res.Structured, want) || strings.Contains(string(res.Stdout), secret) {
			t.Errorf("structured %#v stdout %q; want %#v and no secret", res.Structured, res.Stdout, want)
		}
	})
	t.Run("cut mid-secret", func(t *testing.T) {
		t.Parallel()
		c := command("cut", "printenv", "TOKEN")
		p := withEnv(c)
		p.MaxOutput = 10
		res := mustRun(t, r, p, c, nil)
		if !res.Truncated || string(res.Stdout) != "[REDACTED:tok]" {
			t.Errorf("truncated %v stdout %q; want the partial secret redacted", res.Truncated, res.Stdout)
		}
	})
	t.Run("stderr tail cut mid-secret", func(t *testing.T) {
		t.Parallel()
		// The tail keeps the last StderrTailBytes: the secret's last 6 bytes
		// and then 8186 x's.
		c := command("tail", "sh", "-c", `{ printf %s "$TOKEN"; head -c 8186 /dev/zero | tr '\0' x; } >&2`)
		res := mustRun(t, r, withEnv(c), c, nil)
		want := "[REDACTED:tok]" + strings.Repeat("x", 8186)
		if res.StderrTail != want {
			t.Errorf("stderr tail starts %q, want it to start with the redaction mark", res.StderrTail[:20])
		}
	})
	if got := r.Redact("a " + secret + "-and-more b abc"); got != "a [REDACTED:tok-long] b abc" {
		t.Errorf("Redact = %q", got)
	}
}

func TestRunCleanEnvironment(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, map[string]string{"tok": "value-of-token"})
	c := command("env", "printenv")
	p := packOf(c)
	p.Env = map[string]string{"PACK_VAR": "x={credential.tok}", "LANG": "C"}
	res := mustRun(t, r, p, c, nil)
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		names = append(names, k)
		if k == "LANG" && v != "C" {
			t.Errorf("pack env should override LANG, got %q", v)
		}
		if k == "PACK_VAR" && v != "x=[REDACTED:tok]" {
			t.Errorf("PACK_VAR = %q", v)
		}
	}
	slices.Sort(names)
	if want := []string{"HOME", "LANG", "PACK_VAR", "PATH", "TMPDIR"}; !slices.Equal(names, want) {
		t.Errorf("command saw variables %v, want exactly %v", names, want)
	}
}

func TestRunWorkingDirectory(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	packDir, cmdDir := t.TempDir(), t.TempDir()
	tests := []struct {
		name            string
		packCwd, cmdCwd string
		want            string
	}{
		{"command cwd wins", packDir, cmdDir, cmdDir},
		{"pack cwd", packDir, "", packDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := command("pwd", "pwd")
			c.Cwd = tt.cmdCwd
			p := packOf(c)
			p.Cwd = tt.packCwd
			res := mustRun(t, r, p, c, nil)
			want, _ := filepath.EvalSymlinks(tt.want)
			if got := strings.TrimSpace(string(res.Stdout)); got != want {
				t.Errorf("ran in %q, want %q", got, want)
			}
		})
	}
}

func TestPrepareBounds(t *testing.T) {
	t.Parallel()
	r := NewRunner(nil, os.Getenv)
	if r.DefaultTimeout != DefaultTimeout || r.DefaultMaxOutput != DefaultMaxOutput || r.KillGrace != DefaultKillGrace {
		t.Fatalf("NewRunner defaults = %v %v %v", r.DefaultTimeout, r.DefaultMaxOutput, r.KillGrace)
	}
	tests := []struct {
		name      string
		pack      workspace.CommandPack
		runner    *Runner
		timeout   time.Duration
		maxOutput int64
	}{
		{"built-in defaults", workspace.CommandPack{}, r, DefaultTimeout, DefaultMaxOutput},
		{"zero runner falls back to built-ins", workspace.CommandPack{}, &Runner{}, DefaultTimeout, DefaultMaxOutput},
		{"runner defaults", workspace.CommandPack{}, &Runner{DefaultTimeout: time.Second, DefaultMaxOutput: 99}, time.Second, 99},
		{"pack values", workspace.CommandPack{Timeout: workspace.Duration(time.Minute), MaxOutput: 4096}, r, time.Minute, 4096},
		{"command override", workspace.CommandPack{Timeout: workspace.Duration(time.Minute),
			TimeoutOverrides: map[string]workspace.Duration{"c": workspace.Duration(5 * time.Minute), "other": 1}}, r, 5 * time.Minute, DefaultMaxOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := command("c", "true")
			inv, err := tt.runner.Prepare(&tt.pack, c, nil)
			if err != nil {
				t.Fatal(err)
			}
			if inv.Timeout != tt.timeout || inv.MaxOutput != tt.maxOutput {
				t.Errorf("timeout %v max %d, want %v %d", inv.Timeout, inv.MaxOutput, tt.timeout, tt.maxOutput)
			}
		})
	}
}

// TestRunDefaultsEnforced shows the runner's defaults bound a pack that
// declares no bounds at all.
func TestRunDefaultsEnforced(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	r.DefaultMaxOutput = 16
	r.DefaultTimeout = 300 * time.Millisecond
	yes := command("yes", "yes")
	res := mustRun(t, r, packOf(yes), yes, nil)
	if !res.Truncated || len(res.Stdout) != 16 {
		t.Errorf("undeclared max_output: truncated %v, %d bytes kept; want the default 16", res.Truncated, len(res.Stdout))
	}
	sleep := command("sleep", "sleep", "30")
	res = mustRun(t, r, packOf(sleep), sleep, nil)
	if !res.TimedOut || res.Duration > 10*time.Second {
		t.Errorf("undeclared timeout: timed out %v after %v", res.TimedOut, res.Duration)
	}
}

func TestPrepareErrors(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, map[string]string{"empty": ""})
	tests := []struct {
		name string
		pack func() *workspace.CommandPack
		args map[string]any
		want string
	}{
		{"undeclared credential", func() *workspace.CommandPack {
			p := packOf(command("c", "true"))
			p.Env = map[string]string{"T": "{credential.gone}"}
			return p
		}, nil, `env T needs credential "gone", which has no value`},
		{"empty credential", func() *workspace.CommandPack {
			p := packOf(command("c", "true"))
			p.Env = map[string]string{"T": "{credential.empty}"}
			return p
		}, nil, `credential "empty", which has no value`},
		{"injection", func() *workspace.CommandPack { return packOf(command("c", "git", "log", "{rev}")) },
			map[string]any{"rev": "--output=x"}, `command test:c: parameter "rev": value "--output=x" starts with "-"`},
		{"write_to missing parameter", func() *workspace.CommandPack {
			c := command("c", "jq", ".", "{file}")
			c.Output.WriteTo = "{out}"
			return packOf(c)
		}, map[string]any{"file": "f"}, `output.write_to: parameter "out": is needed to name the output file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.pack()
			_, err := r.Prepare(p, p.Commands[0], tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Prepare error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRunRelativeProgramResolvedInCwd(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\necho local tool\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := command("c", "./tool")
	c.Cwd = dir
	if res := mustRun(t, r, packOf(c), c, nil); string(res.Stdout) != "local tool\n" {
		t.Errorf("stdout %q err %q", res.Stdout, res.Err)
	}
}

func TestRunCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	c := command("c", "true")
	inv, err := r.Prepare(packOf(c), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := r.Run(ctx, inv); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Errorf("Run = %v, %v; want a not-started error", res, err)
	}
}

func TestRunMissingBinary(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	c := command("c", "toolgate-no-such-program", "x")
	inv, err := r.Prepare(packOf(c), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background(), inv)
	if err == nil || !strings.Contains(err.Error(), `"toolgate-no-such-program" not found on PATH`) || res != nil {
		t.Errorf("Run = %v, %v; want an error saying the program is not on PATH", res, err)
	}
}
