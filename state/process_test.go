package state

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
)

// Environment of the helper process.
const (
	helperWhereEnv = "TOOLGATE_STATE_HELPER_WHERE" // file path, dir or DSN
	helperIDEnv    = "TOOLGATE_STATE_HELPER_ID"
	helperCountEnv = "TOOLGATE_STATE_HELPER_COUNT"
)

// TestHelperProcess is not a test: the multi-process tests re-execute the
// test binary with it selected and helperEnv naming the role, to get real
// separate processes. Roles: append-file / append-pg (append COUNT events
// once stdin closes) and wait (hold one call for approval, print the
// outcome) and open (open the embedded store in each directory read from
// stdin, one line each, and print OPENED or FAILED).
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("helper process for the multi-process tests")
	}
	where, id := os.Getenv(helperWhereEnv), os.Getenv(helperIDEnv)
	ctx := context.Background()
	switch role {
	case "append-file", "append-pg":
		n, _ := strconv.Atoi(os.Getenv(helperCountEnv))
		var sink audit.Sink
		if role == "append-file" {
			l, err := audit.Open(where, audit.Options{Fsync: true})
			if err != nil {
				t.Fatal(err)
			}
			sink = l
		} else {
			p, err := OpenPostgres(ctx, where)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			sink = p.AuditChain(audit.Options{})
		}
		defer sink.Close()
		if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := sink.Append(&audit.Event{Agent: id, Decision: "allow", Reason: strconv.Itoa(i)}); err != nil {
				t.Fatalf("%s append %d: %v", id, i, err)
			}
		}
	case "open":
		// Each line read is a directory: open the store there and say so.
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			s, err := OpenEmbedded(ctx, sc.Text())
			if err != nil {
				fmt.Fprintf(os.Stdout, "FAILED %v\n", err)
				continue
			}
			s.Close()
			fmt.Fprintln(os.Stdout, "OPENED")
		}
	case "wait":
		s, err := OpenEmbedded(ctx, where)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		b := approvals.New(approvals.Options{Store: s, TTL: time.Minute})
		defer b.Close()
		res := b.Wait(ctx, testKey, testInfo, approvals.WaitOptions{Wait: time.Minute})
		out, _ := json.Marshal(map[string]string{"outcome": string(res.Outcome), "id": res.Request.ID, "by": res.Request.DecidedBy})
		fmt.Fprintf(os.Stdout, "RESULT %s\n", out)
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// helper starts the test binary as a helper process of role, what it
// prints kept in the buffer returned.
func helper(t *testing.T, role, where, id string, count int) (*exec.Cmd, io.WriteCloser, *bytes.Buffer) {
	t.Helper()
	out := new(bytes.Buffer)
	cmd, gate := startHelper(t, role, where, id, count, out)
	return cmd, gate, out
}

// startHelper starts the test binary as a helper process of role, writing
// what it prints to out; gate is its stdin.
func startHelper(t *testing.T, role, where, id string, count int, out io.Writer) (cmd *exec.Cmd, gate io.WriteCloser) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, helperWhereEnv+"="+where, helperIDEnv+"="+id, helperCountEnv+"="+strconv.Itoa(count))
	cmd.Stdout, cmd.Stderr = out, out
	gate, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, gate
}

// TestChainFourProcesses: 4 processes × 500 appends form one chain that
// verifies, with every writer's events present and in its order — on the
// embedded JSONL file and on the PostgreSQL chain.
func TestChainFourProcesses(t *testing.T) {
	t.Parallel()
	const procs, each = 4, 500
	run := func(t *testing.T, role, where string, verify func() (audit.Report, []audit.Event)) {
		var cmds []*exec.Cmd
		var outs []*bytes.Buffer
		var gates []io.WriteCloser
		for i := range procs {
			cmd, gate, out := helper(t, role, where, fmt.Sprint("w", i), each)
			cmds, gates, outs = append(cmds, cmd), append(gates, gate), append(outs, out)
		}
		for _, g := range gates {
			g.Close()
		}
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("writer %d: %v\n%s", i, err, outs[i])
			}
		}
		rep, evs := verify()
		if rep.Events != procs*each {
			t.Fatalf("%d events, want %d", rep.Events, procs*each)
		}
		next, switches := map[string]int{}, 0
		for i, ev := range evs {
			if ev.Reason != strconv.Itoa(next[ev.Agent]) {
				t.Fatalf("seq %d: writer %s event %s, want %d", ev.Seq, ev.Agent, ev.Reason, next[ev.Agent])
			}
			next[ev.Agent]++
			if i > 0 && evs[i-1].Agent != ev.Agent {
				switches++
			}
		}
		t.Logf("%d processes × %d: one chain of %d events, %d switches between writers", procs, each, rep.Events, switches)
	}
	t.Run("embedded file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		run(t, "append-file", path, func() (audit.Report, []audit.Event) {
			rep, err := audit.VerifyFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var evs []audit.Event
			if err := audit.Tail(context.Background(), path, audit.TailOptions{}, func(r audit.Record) error {
				evs = append(evs, r.Event)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return rep, evs
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := needPG(t)
		p, err := OpenPostgres(context.Background(), dsn) // migrate before the writers start
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		run(t, "append-pg", dsn, func() (audit.Report, []audit.Event) {
			rep, err := p.VerifyChain(context.Background(), audit.VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := p.Export(context.Background(), &buf, 0); err != nil {
				t.Fatal(err)
			}
			if frep, err := audit.Verify(bytes.NewReader(buf.Bytes())); err != nil || frep.LastHash != rep.LastHash || frep.Events != rep.Events {
				t.Fatalf("export verified by the file verifier: %+v %v, want %+v", frep, err, rep)
			}
			var evs []audit.Event
			for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
				var ev audit.Event
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatal(err)
				}
				evs = append(evs, ev)
			}
			return rep, evs
		})
	})
}

// TestEmbeddedFirstOpenTogether: processes that open one new store at the
// same moment (a harness starts one stdio process per surface of a
// workspace at once) all open it. Turning a new file to WAL mode takes
// SQLite's exclusive lock, and a process that meets another doing the
// same is refused at once (SQLITE_BUSY, whatever the busy timeout), which
// was reported as a damaged database; opening is now serialised. Two
// helper processes are handed each new directory together, round after
// round: without the lock a few rounds in a hundred failed.
func TestEmbeddedFirstOpenTogether(t *testing.T) {
	t.Parallel()
	const rounds, procs = 300, 2
	type proc struct {
		in  io.WriteCloser
		out *bufio.Scanner
	}
	var ps []proc
	for i := range procs {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		_, gate := startHelper(t, "open", "", fmt.Sprint("p", i), 0, w)
		w.Close()
		t.Cleanup(func() { r.Close() })
		ps = append(ps, proc{gate, bufio.NewScanner(r)})
	}
	for r := range rounds {
		dir := filepath.Join(t.TempDir(), ".toolgate")
		for _, p := range ps {
			if _, err := io.WriteString(p.in, dir+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		for i, p := range ps {
			line := ""
			for p.out.Scan() {
				if line = p.out.Text(); strings.HasPrefix(line, "OPENED") || strings.HasPrefix(line, "FAILED") {
					break
				}
			}
			if !strings.HasPrefix(line, "OPENED") {
				t.Fatalf("round %d, process %d: %q", r, i, line)
			}
		}
	}
}

// TestEmbeddedTwoProcesses: a call held by one process is listed and
// approved by another on the same .toolgate/, and the first one's waiter
// wakes and runs.
func TestEmbeddedTwoProcesses(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".toolgate")
	cmd, gate, out := helper(t, "wait", dir, "", 0)
	gate.Close()
	s, err := OpenEmbedded(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var d decisions
	b := newBroker(t, s, &d, time.Minute)
	req := waitPending(t, b, testKey)
	if _, err := b.ApproveContext(context.Background(), req.ID, approvals.ByOperator); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("waiting process: %v\n%s", err, out)
	}
	want := fmt.Sprintf(`RESULT {"by":"operator","id":%q,"outcome":"granted"}`, req.ID)
	if !bytes.Contains(out.Bytes(), []byte(want)) {
		t.Fatalf("waiting process printed:\n%s\nwant %s", out, want)
	}
	if got := d.of(req.ID); len(got) != 1 {
		t.Errorf("decision reported %v times in this process, want once", got)
	}
}
