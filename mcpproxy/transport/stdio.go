package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stdioKillGrace is how long a stdio server gets to exit after its stdin
// closes before its process group is sent SIGTERM, then SIGKILL.
const stdioKillGrace = 2 * time.Second

// stderrTail is how much of a stdio server's stderr is kept to explain its
// exit.
const stderrTail = 2048

// stdioConn is one server process speaking newline-delimited JSON-RPC on
// stdin/stdout, in its own process group — under the packs supervisor when
// Config.Supervisor is set, so that its whole tree stops with the session
// and with the gateway, even a gateway killed outright.
type stdioConn struct {
	cfg *Config
	cmd *exec.Cmd
	// ctl is the write end of the supervisor's control pipe (nil without
	// one): a byte asks it to stop the tree; its closing, when the gateway
	// dies, does too.
	ctl *os.File
	// report is the read end of the supervisor's report pipe (nil without
	// one): what the server's exit was, read once the supervisor exited.
	report *os.File
	// in is the write end of the server's stdin pipe, with write
	// deadlines: a server that stops reading cannot hold a writer (or
	// Close) past the bound.
	in   *os.File
	wmu  sync.Mutex
	recv chan Incoming
	done chan struct{}
	err  error

	closeOnce sync.Once
	exited    chan struct{}
	tailMu    sync.Mutex
	tail      []byte
}

func dialStdio(cfg *Config) (*stdioConn, error) {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("start server %q (%s): %w", cfg.ID, cfg.Command[0], cmd.Err)
	}
	cmd.Env = cfg.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = cfg.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var ctl, report *os.File
	if cfg.Supervisor != "" {
		var err error
		if ctl, report, err = superviseCmd(cmd, cfg.Supervisor); err != nil {
			return nil, fmt.Errorf("start server %q: %w", cfg.ID, err)
		}
	}
	stdin, in, err := os.Pipe()
	if err != nil {
		closeFiles(ctl, report)
		return nil, err
	}
	cmd.Stdin = stdin
	defer stdin.Close() // the child holds its own copy once started
	out, err := cmd.StdoutPipe()
	if err != nil {
		in.Close()
		closeFiles(ctl, report)
		return nil, err
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		in.Close()
		closeFiles(ctl, report)
		return nil, err
	}
	err = cmd.Start()
	closeChildEnds(cmd)
	if err != nil {
		in.Close()
		closeFiles(ctl, report)
		return nil, fmt.Errorf("start server %q (%s): %w", cfg.ID, cfg.Command[0], err)
	}
	c := &stdioConn{cfg: cfg, cmd: cmd, ctl: ctl, report: report, in: in, recv: make(chan Incoming, 64), done: make(chan struct{}), exited: make(chan struct{})}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); c.readStderr(errPipe) }()
	readErr := make(chan error, 1)
	go func() { defer readers.Done(); readErr <- c.readStdout(out); close(c.recv) }()
	go func() {
		rerr := <-readErr
		if rerr != nil {
			// A protocol failure (an oversized line): the process must go.
			c.kill()
		}
		readers.Wait()
		werr := cmd.Wait()
		if c.report != nil {
			werr = supervisedExit(c.report, werr)
		}
		close(c.exited)
		switch {
		case rerr != nil:
			c.err = rerr
		case werr != nil:
			c.err = fmt.Errorf("server %q exited: %v%s", cfg.ID, werr, c.stderrNote())
		default:
			c.err = fmt.Errorf("server %q exited%s", cfg.ID, c.stderrNote())
		}
		close(c.done)
	}()
	return c, nil
}

// readStdout delivers each line as one message, refusing lines longer than
// the server's message bound (memory stays bounded whatever it prints).
func (c *stdioConn) readStdout(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	max := c.cfg.MessageLimit()
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if int64(len(line)+len(chunk)) > max {
			return fmt.Errorf("server %q wrote a message longer than %d bytes; the connection was closed (raise max_output if this is legitimate)", c.cfg.ID, max)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			line = append(line, chunk...)
			continue
		}
		if len(line) > 0 {
			chunk = append(line, chunk...)
			line = nil
		}
		if msg := trimLine(chunk); len(msg) > 0 {
			out := make([]byte, len(msg))
			copy(out, msg)
			c.recv <- Incoming{Msg: out}
		}
		if err != nil {
			return nil
		}
	}
}

func trimLine(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

func (c *stdioConn) readStderr(r io.Reader) {
	br := bufio.NewReader(r)
	log := c.cfg.Log()
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if len(line) > 512 {
				// Cut, but keep the line a line: the tail is read by lines.
				line = line[:512] + "\n"
			}
			log.Debug("mcp server stderr", "server", c.cfg.ID, "line", strings.TrimRight(line, "\n"))
			c.tailMu.Lock()
			c.tail = append(c.tail, line...)
			if len(c.tail) > stderrTail {
				c.tail = c.tail[len(c.tail)-stderrTail:]
			}
			c.tailMu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (c *stdioConn) stderrNote() string {
	c.tailMu.Lock()
	defer c.tailMu.Unlock()
	t := strings.TrimSpace(string(c.tail))
	if t == "" {
		return ""
	}
	if i := strings.LastIndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	return " (stderr: " + t + ")"
}

func (c *stdioConn) Send(_ context.Context, msg []byte, _ json.RawMessage) error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := make([]byte, 0, len(msg)+1)
	if bytes.ContainsAny(msg, "\r\n") {
		// A client's message may hold line breaks between tokens, which
		// would end the line early: compact them away.
		var b bytes.Buffer
		if json.Compact(&b, msg) == nil {
			msg = b.Bytes()
		}
	}
	buf = append(append(buf, msg...), '\n')
	_ = c.in.SetWriteDeadline(time.Now().Add(c.writeTimeout()))
	if _, err := c.in.Write(buf); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The server stopped reading: it cannot be talked to any more.
			c.kill()
			return fmt.Errorf("server %q stopped reading its input (a write did not finish within %s); it was stopped", c.cfg.ID, c.writeTimeout())
		}
		return fmt.Errorf("write to server %q: %w", c.cfg.ID, err)
	}
	return nil
}

// writeTimeout bounds one write to the server's stdin.
func (c *stdioConn) writeTimeout() time.Duration { return min(c.cfg.RequestTimeout(""), stdioWriteMax) }

// stdioWriteMax is the longest one write to a stdio server may take.
const stdioWriteMax = 10 * time.Second

func (c *stdioConn) Recv() <-chan Incoming     { return c.recv }
func (c *stdioConn) Done() <-chan struct{}     { return c.done }
func (c *stdioConn) Err() error                { return c.err }
func (c *stdioConn) SetProtocolVersion(string) {}

// Close closes the server's stdin (the MCP way to ask a stdio server to
// exit), then after a grace period terminates and kills its process group,
// and waits until the process is reaped.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		go func() {
			for range c.recv {
			}
		}()
		// Not under wmu: closing unblocks a write stuck on a full pipe.
		_ = c.in.Close()
		select {
		case <-c.exited:
		case <-time.After(stdioKillGrace):
			if c.ctl != nil {
				// The supervisor terminates, waits its grace, kills, and
				// exits once no descendant is left.
				c.stop()
				<-c.exited
				break
			}
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-c.exited:
			case <-time.After(stdioKillGrace):
				c.kill()
			}
		}
		// Children left in the group outlive no session.
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.done
		closeFiles(c.ctl, c.report)
	})
	return nil
}

// kill stops the server at once (a protocol failure): its whole tree
// through the supervisor, else its process group.
func (c *stdioConn) kill() {
	if c.ctl != nil {
		c.stop()
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
}

// stop asks the supervisor to stop the server's tree. The pipe holds the
// byte whether or not the supervisor reads it yet; an error means it has
// gone already.
func (c *stdioConn) stop() { _, _ = c.ctl.Write([]byte{0}) }
