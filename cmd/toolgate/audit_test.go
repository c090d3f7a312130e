package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// auditCLI returns a cli writing to the returned buffers, with env as its
// environment.
func auditCLI(env map[string]string) (*cli, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return &cli{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return env[k] },
		log: slog.New(slog.DiscardHandler)}, &stdout, &stderr
}

// writeAuditLog appends n events with fixed times to path and returns the
// last hash.
func writeAuditLog(t *testing.T, path string, n int) string {
	t.Helper()
	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var last string
	for i := range n {
		ev := &audit.Event{
			Time:  time.Date(2026, 3, 4, 5, 6, i, 7_000_000, time.UTC),
			Agent: []string{"reader", "writer"}[i%2], Decision: []string{"allow", "deny", "approval"}[i%3],
			Action: "command:call:json-tools:query", Reason: fmt.Sprintf("reason %d", i), Tier: "cautious",
			Payload: audit.Payload{Provider: "command", Container: "json-tools", Member: "query", Effects: "read"},
		}
		if i == 4 {
			ev.Error = "timeout after 30s"
			ev.Action = "mcp:call:evil:\x1b[31mred"
		}
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
		last = ev.Hash
	}
	return last
}

// notProven is what verify says of a chain checked without a key.
const notProven = "not proven: without a signing key this check cannot detect a truncated or rewritten tail (last events dropped, the file cut short, or the whole chain rewritten from scratch all verify as ok); anchor the head above outside toolgate and pass --head, or sign the chain (gateway.audit.signing_key, `toolgate audit keygen`) and verify with --public-key\n"

func TestAuditVerifyCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	lastHash := writeAuditLog(t, good, 5)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	edited := write("edited.jsonl", bytes.Replace(data, []byte("reason 1"), []byte("reason X"), 1))
	removed := write("removed.jsonl", bytes.Join([][]byte{lines[0], lines[1], lines[3], lines[4]}, nil))
	cut := len(data) - len(lines[4]) + 30
	truncated := write("truncated.jsonl", data[:cut])
	empty := write("empty.jsonl", nil)

	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderrIn []string
	}{
		{"intact", []string{good}, exitOK, "ok: 5 events, chain intact, last hash " + lastHash + "\n" +
			"head: 5:" + lastHash + " (anchor it outside toolgate; check it later with --head 5:" + lastHash + ")\n" + notProven +
			"finding: 2 allowed calls have no outcome event (the gateway stopped during the call, or the call is still running):\n" +
			"  seq 1 2026-03-04T05:06:00.007Z reader command:call:json-tools:query\n" +
			"  seq 4 2026-03-04T05:06:03.007Z writer command:call:json-tools:query\n", nil},
		{"empty", []string{empty}, exitOK, "ok: 0 events, chain intact, last hash (none: the log is empty)\n" + notProven, nil},
		{"edited", []string{edited}, exitFail, "", []string{edited + ": line 2 (seq 2): edited: "}},
		{"removed", []string{removed}, exitFail, "", []string{"line 3 (seq 3): missing: seq 3 is missing"}},
		{"truncated", []string{truncated}, exitFail, "", []string{
			"line 5 is truncated (no trailing newline / incomplete JSON): the writer probably crashed mid-append; the 4 events before it verify",
			fmt.Sprintf("truncate -s %d %s", len(data)-len(lines[4]), truncated)}},
		{"missing file", []string{filepath.Join(dir, "none.jsonl")}, exitFail, "", []string{"no such file"}},
		{"two files", []string{good, empty}, exitUsage, "", []string{"one FILE at most"}},
		{"file and workspace", []string{good, "-w", "x.yaml"}, exitUsage, "", []string{"not both"}},
		{"unknown flag", []string{"--nope"}, exitUsage, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stdout, stderr := auditCLI(nil)
			code := c.main(context.Background(), append([]string{"audit", "verify"}, tt.args...))
			if code != tt.code || stdout.String() != tt.stdout {
				t.Errorf("exit %d, stdout %q; want %d, %q\nstderr: %s", code, stdout, tt.code, tt.stdout, stderr)
			}
			for _, want := range tt.stderrIn {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
	if _, err := os.Stat(truncated); err != nil {
		t.Fatal(err)
	}
}

// TestAuditFileFromWorkspace: without FILE the log is the workspace's
// gateway.audit.path, relative to the workspace file, from -w or the env.
func TestAuditFileFromWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte("version: 1\ngateway:\n  audit: {path: logs/a.jsonl}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeAuditLog(t, filepath.Join(dir, "logs", "a.jsonl"), 3)
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: 1\nbogus: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"-w", nil, []string{"-w", ws}, exitOK, "ok: 3 events"},
		{"env", map[string]string{"TOOLGATE_WORKSPACE": ws}, nil, exitOK, "ok: 3 events"},
		{"invalid workspace", nil, []string{"-w", bad}, exitFail, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stdout, stderr := auditCLI(tt.env)
			code := c.main(context.Background(), append([]string{"audit", "verify"}, tt.args...))
			if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.want) {
				t.Errorf("exit %d, output %s%s; want %d and %q", code, stdout, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestAuditDefaultFile is not parallel: it changes the working directory to
// check the ./audit.jsonl default.
func TestAuditDefaultFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeAuditLog(t, filepath.Join(dir, audit.DefaultFile), 2)
	c, stdout, stderr := auditCLI(nil)
	if code := c.main(context.Background(), []string{"audit", "verify"}); code != exitOK || !strings.HasPrefix(stdout.String(), "ok: 2 events") {
		t.Errorf("exit %d, %s%s", code, stdout, stderr)
	}
}

func TestAuditTailCLI(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	writeAuditLog(t, path, 6)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rawLines := strings.SplitAfter(string(data), "\n")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"text, default last 10", nil, exitOK, "" +
			"#1 2026-03-04T05:06:00.007Z reader allow command:call:json-tools:query — reason 0\n" +
			"#2 2026-03-04T05:06:01.007Z writer deny command:call:json-tools:query — reason 1\n" +
			"#3 2026-03-04T05:06:02.007Z reader approval command:call:json-tools:query — reason 2\n" +
			"#4 2026-03-04T05:06:03.007Z writer allow command:call:json-tools:query — reason 3\n" +
			"#5 2026-03-04T05:06:04.007Z reader deny \"mcp:call:evil:\\x1b[31mred\" — reason 4 (error: timeout after 30s)\n" +
			"#6 2026-03-04T05:06:05.007Z writer approval command:call:json-tools:query — reason 5\n"},
		{"-n 2", []string{"-n", "2"}, exitOK, "" +
			"#5 2026-03-04T05:06:04.007Z reader deny \"mcp:call:evil:\\x1b[31mred\" — reason 4 (error: timeout after 30s)\n" +
			"#6 2026-03-04T05:06:05.007Z writer approval command:call:json-tools:query — reason 5\n"},
		{"agent filter, json", []string{"--agent", "writer", "--format", "json"}, exitOK, rawLines[1] + rawLines[3] + rawLines[5]},
		{"decision filter, last 1, json", []string{"--decision", "deny", "-n", "1", "--format=json"}, exitOK, rawLines[4]},
		{"no match", []string{"--agent", "nobody"}, exitOK, ""},
		{"bad format", []string{"--format", "yaml"}, exitUsage, ""},
		{"negative n", []string{"-n", "-1"}, exitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stdout, stderr := auditCLI(nil)
			code := c.main(context.Background(), append([]string{"audit", "tail", path}, tt.args...))
			if code != tt.code || stdout.String() != tt.want {
				t.Errorf("exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s\nstderr: %s", code, stdout, tt.code, tt.want, stderr)
			}
		})
	}
}

// notifyBuffer is a goroutine-safe buffer that signals each write, so a test
// can wait for output without sleeping.
type notifyBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (b *notifyBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *notifyBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor returns once the buffer contains want, failing after a deadline.
func (b *notifyBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(b.String(), want) {
		select {
		case <-b.wrote:
		case <-deadline:
			t.Fatalf("output never contained %q; got:\n%s", want, b.String())
		}
	}
}

func TestAuditTailFollowCLI(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.jsonl")
	writeAuditLog(t, path, 2)
	out := &notifyBuffer{wrote: make(chan struct{}, 1)}
	var stderr bytes.Buffer
	c := &cli{stdout: out, stderr: &stderr, getenv: func(string) string { return "" }, log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- c.main(ctx, []string{"audit", "tail", path, "--follow", "--agent", "reader", "-n", "1"})
	}()
	out.waitFor(t, "reason 0")

	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, ev := range []*audit.Event{{Agent: "writer", Reason: "hidden"}, {Agent: "reader", Decision: "allow", Reason: "live event"}} {
		if err := l.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	out.waitFor(t, "#4 ")
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after interrupt; stderr: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("tail --follow did not stop when its context was cancelled")
	}
	if got := out.String(); strings.Contains(got, "hidden") || strings.Count(got, "\n") != 2 || !strings.Contains(got, "reader allow") || !strings.Contains(got, "— live event") {
		t.Errorf("follow output:\n%s", got)
	}
}

func TestAuditUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"audit"}, exitUsage, "toolgate audit verify"},
		{[]string{"audit", "--help"}, exitOK, "toolgate audit tail"},
		{[]string{"help", "audit"}, exitOK, "toolgate audit tail"},
		{[]string{"audit", "rotate"}, exitUsage, `unknown subcommand "rotate"`},
		{[]string{"audit", "tail", "--help"}, exitOK, "--follow"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			c, _, stderr := auditCLI(nil)
			if code := c.main(context.Background(), tt.args); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}
