package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Era names as mcp-go's client pins them: a version before 2026-07-28
// keeps the client on initialize (a session, Mcp-Session-Id); 2026-07-28
// makes it stateless (server/discover, _meta on every request).
const (
	eraSession   = "2025-11-25"
	eraStateless = "2026-07-28"
)

// callTimeout bounds one call, so a wedged peer fails the bench instead of
// hanging it.
const callTimeout = 30 * time.Second

// openHTTP opens an MCP client of the given era on url (bearer token
// optional) over streamable HTTP, sharing hc's connection pool.
func openHTTP(url, token, era string, hc *http.Client) *client.Client {
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc)}
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	tr, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		fatalf("client for %s: %v", url, err)
	}
	return startClient(client.NewClient(tr, client.WithProtocolVersion(era)), url)
}

// openStdio launches argv as a stdio MCP server and opens a client of the
// given era on it; it returns the server's pid too.
func openStdio(argv []string, era string) (*client.Client, int) {
	var cmd *exec.Cmd
	tr := transport.NewStdioWithOptions(argv[0], nil, argv[1:], transport.WithCommandFunc(
		func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd = exec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), env...)
			return cmd, nil
		}))
	// Start runs the command factory and starts the process before it
	// returns, so cmd.Process is set after it.
	if err := tr.Start(context.Background()); err != nil {
		fatalf("start stdio server %v: %v", argv, err)
	}
	cl := startClient(client.NewClient(tr, client.WithProtocolVersion(era)), argv[0])
	return cl, cmd.Process.Pid
}

func startClient(cl *client.Client, what string) *client.Client {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if err := cl.Start(ctx); err != nil {
		fatalf("start client for %s: %v", what, err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "toolgate-bench", Version: "1"}
	if _, err := cl.Initialize(ctx, req); err != nil {
		fatalf("initialize %s: %v", what, err)
	}
	return cl
}

// phase is what one run of calls measured.
type phase struct {
	lat     []time.Duration
	elapsed time.Duration
	// CPU used meanwhile by toolgate (self, and its children: pack
	// commands), the downstream server and the bench client itself.
	gateSelf, gateChildren, server, client time.Duration
}

func (p *phase) add(q phase) {
	p.lat = append(p.lat, q.lat...)
	p.elapsed += q.elapsed
	p.gateSelf += q.gateSelf
	p.gateChildren += q.gateChildren
	p.server += q.server
	p.client += q.client
}

// calls is how many calls the phase made.
func (p *phase) calls() int { return len(p.lat) }

func (p *phase) quantile(q float64) time.Duration {
	if len(p.lat) == 0 {
		return 0
	}
	s := slices.Clone(p.lat)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func (p *phase) rate() float64 { return float64(p.calls()) / p.elapsed.Seconds() }

// perCall is d per call in µs.
func (p *phase) perCall(d time.Duration) float64 {
	return float64(d.Microseconds()) / float64(max(p.calls(), 1))
}

// runPhase makes n calls of one over conc workers (worker w uses its own
// client slot w) and measures them, with the CPU of gatePID (0: none) and
// of the servers' processes over the phase.
func runPhase(conc, n int, gatePID int, servers []int, one func(w int) error) phase {
	g0, s0, c0 := mustCPU(gatePID), sumCPU(servers), selfCPU()
	lat := make([][]time.Duration, conc)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for w := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				t := time.Now()
				if err := one(w); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				lat[w] = append(lat[w], time.Since(t))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		fatalf("call failed: %v", err)
	}
	g1, s1, c1 := mustCPU(gatePID), sumCPU(servers), selfCPU()
	return phase{lat: slices.Concat(lat...), elapsed: elapsed,
		gateSelf: g1.self - g0.self, gateChildren: g1.children - g0.children,
		server: s1 - s0, client: c1 - c0}
}

// sumCPU is the CPU time (self) of every process in pids.
func sumCPU(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		sum += mustCPU(pid).self
	}
	return sum
}

// echoCall calls the echo tool on cl and checks the answer.
func echoCall(cl *client.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": "hello"}
	res, err := cl.CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("echo returned an error result: %v", res.Content)
	}
	return nil
}

// selfCPU is the bench process's own CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childrenCPU is the CPU time of the bench's waited-for children.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
