package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
	"github.com/toolgate/toolgate/packs/supervisor"
)

func dialTiny(t *testing.T, env ...string) *stdioConn {
	t.Helper()
	return dialConfig(t, tinyConfig("tiny", env...))
}

func dialConfig(t *testing.T, cfg *Config) *stdioConn {
	t.Helper()
	c, err := dialStdio(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func recvLine(t *testing.T, c Conn) string {
	t.Helper()
	select {
	case in, ok := <-c.Recv():
		if !ok {
			t.Fatalf("connection ended: %v", c.Err())
		}
		return string(in.Msg)
	case <-time.After(10 * time.Second):
		t.Fatal("no message from the server")
	}
	return ""
}

// TestStdioRoundTrip: one line a message, both ways; a client message
// holding line breaks is compacted so it stays one line.
func TestStdioRoundTrip(t *testing.T) {
	t.Parallel()
	c := dialTiny(t)
	pretty := "{\"jsonrpc\": \"2.0\",\n \"id\": 1,\n \"method\": \"tools/call\",\n \"params\": {\"name\": \"echo\", \"arguments\": {\"text\": \"a\\nb\"}}\n}"
	if err := c.Send(context.Background(), []byte(pretty), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if got := recvLine(t, c); !strings.Contains(got, `"text":"a\nb"`) {
		t.Errorf("answer %s", got)
	}
	c.SetProtocolVersion("2025-11-25")
}

// supervised is how each process test runs: the server started directly,
// and contained (package contain), as the gateway runs it.
var supervised = []struct {
	name    string
	contain *contain.Manager
}{{"direct", nil}, {"contained", testContain}}

// TestStdioExit: a server that exits ends the connection with its exit
// status and the last line of its stderr; writes fail after.
func TestStdioExit(t *testing.T) {
	t.Parallel()
	for _, tt := range supervised {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tinyConfig("tiny")
			cfg.Contain = tt.contain
			c := dialConfig(t, cfg)
			_ = c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crash"}}`), []byte("1"))
			<-c.Done()
			if err := c.Err(); err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "crashing on purpose") {
				t.Errorf("exit error %v", err)
			}
			if err := c.Send(context.Background(), []byte(`{}`), nil); err == nil {
				t.Error("write to an exited server succeeded")
			}
		})
	}
}

// TestStdioStopsReading: a server that stops reading its stdin cannot hold
// a writer past the write bound: it is stopped.
func TestStdioStopsReading(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig("tiny", "TG_TINY_NOREAD=1")
	cfg.Timeout = 100 * time.Millisecond
	c, err := dialStdio(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := []byte(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("y", 1<<20) + `"}`)
	err = c.Send(context.Background(), big, nil)
	if err == nil || !strings.Contains(err.Error(), "stopped reading its input") {
		t.Fatalf("write to a stuck server: %v", err)
	}
	<-c.Done()
}

// TestStdioCloseKills: a server that outlives its stdin is terminated,
// and its process group with it; Close returns once it is reaped.
func TestStdioCloseKills(t *testing.T) {
	t.Parallel()
	for _, tt := range supervised {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tinyConfig("tiny", "TG_TINY_IGNORE_EOF=1")
			cfg.Contain = tt.contain
			c := dialConfig(t, cfg)
			pid := serverPID(t, c)
			start := time.Now()
			c.Close()
			if d := time.Since(start); d < stdioKillGrace {
				t.Errorf("closed after %v, before the grace period", d)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d still there: %v", pid, err)
			}
			if !strings.Contains(c.Err().Error(), "signal: terminated") {
				t.Errorf("err %v", c.Err())
			}
		})
	}
}

// TestStdioContainedOutlivesNoGateway: when the gateway dies — its end of
// the containment watcher's pipe closes, as the kernel closes it for a
// killed process — the watcher stops a server that reads nothing and so
// never sees its stdin end.
func TestStdioContainedOutlivesNoGateway(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig("tiny", "TG_TINY_NOREAD=1")
	m := contain.New(contain.Options{})
	cfg.Contain = m
	c := dialConfig(t, cfg)
	server := onlyChild(t, c.cmd.Process.Pid)
	m.Close()
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher did not stop the server when its gateway went")
	}
	// Killed with its helper, its zombie is init's to reap.
	if st, ok := supervisor.ReadStat(server); ok && st.Running() {
		t.Errorf("server %d outlived its gateway: state %c", server, st.State)
	}
}

// serverPID is the server's own process: the tiny server's pid tool.
func serverPID(t *testing.T, c *stdioConn) int {
	t.Helper()
	if err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pid"}}`), []byte("7")); err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(recvLine(t, c)), &resp); err != nil || len(resp.Result.Content) != 1 {
		t.Fatalf("pid answer: %v %+v", err, resp)
	}
	pid, err := strconv.Atoi(resp.Result.Content[0].Text)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// onlyChild polls /proc (a condition with a deadline) for the one child
// of pid: the server a helper started.
func onlyChild(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(b)); len(f) == 1 {
			n, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d has no child", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStderrTail: the last StderrLines lines are kept, per process and
// per server, each cut and made safe to show; the exit error carries them.
func TestStderrTail(t *testing.T) {
	t.Parallel()
	shared := &StderrTail{}
	c := &stdioConn{cfg: &Config{ID: "x", Stderr: shared}}
	if got := (&ExitError{Server: "x"}).Error(); got != `server "x" exited (it wrote nothing on stderr)` {
		t.Errorf("no stderr: %q", got)
	}
	r, w, _ := os.Pipe()
	go func() {
		for i := range 25 {
			fmt.Fprintf(w, "line %d\n", i)
		}
		w.WriteString(strings.Repeat("é", 400) + "\n")    // 800 bytes, cut at a rune boundary
		w.WriteString("\x1b[2Jwiped \xff \u202eevil\r\n") // a terminal escape, bad UTF-8, a bidi override
		w.WriteString("Error: Cannot find module 'x'")    // no final newline
		w.Close()
	}()
	c.readStderr(r)
	lines := c.tail.Lines()
	if len(lines) != StderrLines || lines[0] != "line 8" {
		t.Fatalf("kept %d lines from %q, want %d from line 8", len(lines), lines[0], StderrLines)
	}
	if long := lines[StderrLines-3]; len(long) > stderrLineMax+len("…") || !strings.HasSuffix(long, "é…") {
		t.Errorf("long line kept as %d bytes ending %q", len(long), long[len(long)-8:])
	}
	if got, want := lines[StderrLines-2], `\x1b[2Jwiped `+"\uFFFD"+` \u202eevil`; got != want {
		t.Errorf("hostile line kept as %q, want %q", got, want)
	}
	if lines[StderrLines-1] != "Error: Cannot find module 'x'" {
		t.Errorf("last line %q", lines[StderrLines-1])
	}
	if len(shared.Lines()) != 0 {
		t.Error("the server's tail holds lines before its process exited")
	}
	shared.set(lines)
	shared.set(lines) // a second process's exit replaces, never appends
	if !slices.Equal(shared.Lines(), lines) {
		t.Error("the server's tail differs from its last process's")
	}
	err := error(&ExitError{Server: "x", Err: errors.New("exit status 1"), Stderr: lines})
	wrapped := fmt.Errorf("listing: %w", err)
	if got := StderrOf(wrapped); !slices.Equal(got, lines) {
		t.Errorf("StderrOf through a wrap: %q", got)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, `server "x" exited: exit status 1; its last stderr lines:`+"\n  | line 8\n") || !strings.HasSuffix(msg, "\n  | Error: Cannot find module 'x'") {
		t.Errorf("exit error %q", msg)
	}
	if trimLine([]byte("a \r\n")) == nil || string(trimLine([]byte("a \r\n"))) != "a" {
		t.Error("trimLine")
	}
}

// TestStderrLogNamesServerOnce: the server's logger already carries its
// id (the gateway's does), so a stderr line logged with it names the
// server once — a text handler printed server= twice.
func TestStderrLogNamesServerOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("server", "x")
	c := &stdioConn{cfg: &Config{ID: "x", Logger: log}}
	c.readStderr(strings.NewReader("hello\n"))
	line := buf.String()
	if n := strings.Count(line, `"server":`); n != 1 || !strings.Contains(line, `"line":"hello"`) {
		t.Fatalf("stderr logged as %q: server named %d times, want once", line, n)
	}
}
