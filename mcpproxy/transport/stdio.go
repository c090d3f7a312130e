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
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
)

// stdioKillGrace is how long a stdio server gets to exit after its stdin
// closes before its process group is sent SIGTERM, then SIGKILL.
const stdioKillGrace = 2 * time.Second

// stdioConn is one server process speaking newline-delimited JSON-RPC on
// stdin/stdout — contained when Config.Contain is set, so that its whole
// tree stops with the session and with the gateway, even a gateway killed
// outright; else in its own process group.
type stdioConn struct {
	cfg *Config
	cmd *exec.Cmd
	// tree is the server's contained tree (nil without Config.Contain).
	tree *contain.Tree
	// in is the write end of the server's stdin pipe, with write
	// deadlines: a server that stops reading cannot hold a writer (or
	// Close) past the bound.
	in *os.File
	// wsem is held by the one write in progress; a sender waits for it
	// no longer than its own deadline.
	wsem chan struct{}
	recv chan Incoming
	done chan struct{}
	err  error
	// stopped is why toolgate stopped the server itself (it stopped
	// reading its input), set before the kill: the exit then says so
	// first, whichever of the write and the exit a caller hears of first.
	stopped atomic.Pointer[error]

	closeOnce sync.Once
	exited    chan struct{}
	// tail is this process's last stderr lines; cfg.Stderr, when set,
	// has them too, across the server's restarts.
	tail StderrTail
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
	stdin, in, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = stdin
	defer stdin.Close() // the child holds its own copy once started
	out, err := cmd.StdoutPipe()
	if err != nil {
		in.Close()
		return nil, err
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		in.Close()
		return nil, err
	}
	tree, err := startServer(cmd, cfg.Contain)
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("start server %q (%s): %w", cfg.ID, cfg.Command[0], err)
	}
	c := &stdioConn{cfg: cfg, cmd: cmd, tree: tree, in: in, wsem: make(chan struct{}, 1), recv: make(chan Incoming, 64), done: make(chan struct{}), exited: make(chan struct{})}
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
		werr := serverExit(c.tree, cmd.Wait())
		close(c.exited)
		switch {
		case rerr != nil:
			c.err = rerr
		default:
			lines := c.tail.Lines()
			exit := &ExitError{Server: cfg.ID, Err: werr, Stderr: lines}
			c.err = exit
			if why := c.stopped.Load(); why != nil {
				c.err = fmt.Errorf("%w; %w", *why, exit)
			}
			cfg.Stderr.set(lines)
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
		line, err := readLine(br, stderrLineMax)
		if line != "" {
			line = cleanLine(line)
			log.Debug("mcp server stderr", "line", line)
			c.tail.add(line)
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line, keeping at most max bytes of it (and four more,
// so that cleanLine sees it is long and cuts it at a rune boundary): a
// server writing an endless line costs a bounded buffer.
func readLine(br *bufio.Reader, max int) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := max + 4 - len(b); room > 0 {
			b = append(b, chunk[:min(len(chunk), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return string(b), err
	}
}

// Send writes msg as one line. It is bounded by ctx's deadline (the
// request's timeout) and by the write bound, whichever comes first, the
// wait for another sender's write included: a server that stopped reading
// costs each caller its own bound, never the sum of everyone's.
func (c *stdioConn) Send(ctx context.Context, msg []byte, _ json.RawMessage) error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("write to server %q: another write is stuck (the server is not reading its input): %w", c.cfg.ID, ctx.Err())
	case <-c.done:
		return c.err
	}
	defer func() { <-c.wsem }()
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
	bound := c.writeTimeout()
	deadline := time.Now().Add(bound)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, bound = d, time.Until(d).Round(time.Millisecond)
	}
	_ = c.in.SetWriteDeadline(deadline)
	if _, err := c.in.Write(buf); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The server stopped reading: it cannot be talked to any more
			// (and a line cut short would garble the next one).
			why := fmt.Errorf("server %q stopped reading its input (a write did not finish within %s); it was stopped", c.cfg.ID, bound)
			c.stopped.CompareAndSwap(nil, &why)
			c.kill()
			return why
		}
		// A server that exited before reading (it could not start): its
		// exit, with what it said on stderr, explains more than the
		// broken pipe does.
		select {
		case <-c.done:
			return c.err
		case <-time.After(exitExplainWait):
		}
		return fmt.Errorf("write to server %q: %w", c.cfg.ID, err)
	}
	return nil
}

// exitExplainWait is how long a failed write waits for the server's exit
// to explain it.
const exitExplainWait = time.Second

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
		// Not under wsem: closing unblocks a write stuck on a full pipe.
		_ = c.in.Close()
		select {
		case <-c.exited:
		case <-time.After(stdioKillGrace):
			if c.tree != nil {
				// SIGTERM to the tree, its grace, then SIGKILL.
				c.tree.Stop(stdioKillGrace)
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
		// Nothing the server started outlives its session.
		if c.tree != nil {
			c.tree.Stop(stdioKillGrace)
		} else {
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		}
		<-c.done
		if c.tree != nil {
			c.tree.Release()
		}
	})
	return nil
}

// kill stops the server at once (a protocol failure): its whole tree, else
// its process group.
func (c *stdioConn) kill() {
	if c.tree != nil {
		c.tree.Kill()
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
}
