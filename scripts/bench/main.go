// Command bench measures what toolgate costs: the same trivial echo tool
// of an mcp-go server called directly and through toolgate (the built
// binary, full decision and audit, fsync: always by default), for an HTTP
// and a stdio downstream, in both client protocol eras, at concurrency 1
// and 16, in interleaved rounds; with -baseline a second toolgate (the
// "before") and with -tbxark TBXark/mcp-proxy (a Go proxy that decides
// nothing and audits nothing) in the same rounds; pack commands (echo,
// cat of a small file, a jq query) through toolgate against the same bare
// exec; process start against a Go hello-world; and memory with 1,000
// idle sessions.
//
// Per configuration it reports p50/p99 latency, calls/s, and CPU per call
// of toolgate, of the downstream server and of the bench client (deltas
// over each phase of the processes' run time from /proc — per thread,
// /proc/<pid>/task/*/schedstat, in ns, since utime+stime's 10 ms ticks are
// too coarse over 16 server processes; children's from /proc/<pid>/stat —
// summed over the rounds, divided by the calls), toolgate's RSS, and the targets
// as ratios taken in this one run. Everything runs on loopback; every
// loop is bounded and the program stops by itself.
//
// Usage, from the repository root:
//
//	go run ./scripts/bench [-rounds 3] [-calls 1500] [-toolgate BIN] [-fsync always|never]
//	                      [-eras 2025-11-25,2026-07-28] [-sessions 1000] [-pack-calls 300]
//	                      [-baseline OLD_TOOLGATE [-baseline-fsync never]] [-tbxark MCP_PROXY] [-starts 40]
//	                      [-profile cpu.pprof]
//
// Without -toolgate it builds ./cmd/toolgate first. The era is chosen by
// pinning mcp-go's client (client.WithProtocolVersion): 2025-11-25 keeps
// it on initialize and Mcp-Session-Id, 2026-07-28 makes it stateless
// (server/discover, _meta on every request). With -profile, a separate
// toolgate runs with TOOLGATE_CPUPROFILE set under c16 load on both
// downstreams and writes its CPU profile there (go tool pprof -top BIN FILE).
//
// TBXark/mcp-proxy is not part of the project: build it from its public
// source (go build in a checkout of github.com/TBXark/mcp-proxy) and pass
// the binary. The baseline is a toolgate built from an older commit, in a
// `git worktree` outside this repository.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

func main() {
	role := flag.String("role", "", "internal: run as the echo server (echo-http, echo-stdio)")
	bin := flag.String("toolgate", "", "toolgate binary to measure (default: build ./cmd/toolgate)")
	rounds := flag.Int("rounds", 3, "interleaved rounds")
	calls := flag.Int("calls", 1500, "calls per configuration, concurrency and round")
	packCalls := flag.Int("pack-calls", 300, "pack calls (and bare execs) per round")
	sessions := flag.Int("sessions", 1000, "idle sessions to open (0: skip)")
	eras := flag.String("eras", eraSession+","+eraStateless, "client protocol eras, comma-separated")
	fsync := flag.String("fsync", "always", "gateway.audit.fsync of the bench workspace")
	profile := flag.String("profile", "", "write a CPU profile of toolgate under load to this file")
	baseline := flag.String("baseline", "", "a second toolgate binary (say, main's) measured in the same interleaved rounds, for before/after ratios")
	baseFsync := flag.String("baseline-fsync", "", "gateway.audit.fsync of the baseline's workspace (default: -fsync's); -baseline-fsync never with -baseline the same binary shows what the audit's fsync costs")
	tbxark := flag.String("tbxark", "", "a TBXark/mcp-proxy binary measured in the same rounds (an ungoverned proxy, for comparison)")
	idleDetail := flag.Bool("idle-detail", false, "open toolgate's /metrics in the idle-session runs and report its goroutines, heap and stacks")
	starts := flag.Int("starts", 40, "process starts per program for the start-time comparison (0: skip)")
	var gateEnv envList
	flag.Var(&gateEnv, "toolgate-env", "KEY=VALUE added to toolgate's environment (repeatable; e.g. GODEBUG, GOGC)")
	flag.Parse()
	switch *role {
	case "":
	case "echo-http":
		if err := serveEchoHTTP(); err != nil {
			fatalf("%v", err)
		}
		return
	case "echo-stdio":
		if err := serveEchoStdio(); err != nil {
			fatalf("%v", err)
		}
		return
	default:
		fatalf("unknown -role %q", *role)
	}
	if *rounds < 0 || *calls < 16 || *packCalls < 1 {
		fatalf("-rounds ≥ 0 (0: only -sessions and -profile), -calls ≥ 16 and -pack-calls ≥ 1")
	}
	self, err := os.Executable()
	if err != nil {
		fatalf("find this program: %v", err)
	}
	tmp, err := os.MkdirTemp("", "toolgate-bench-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		*bin = filepath.Join(tmp, "toolgate")
		build := exec.Command("go", "build", "-o", *bin, "./cmd/toolgate")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fatalf("build toolgate (run from the repository root, or pass -toolgate): %v", err)
		}
	}
	if *bin, err = filepath.Abs(*bin); err != nil {
		fatalf("%v", err)
	}
	for _, p := range []*string{baseline, tbxark} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				fatalf("%v", err)
			}
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 128 // every worker keeps its connection
	b := &bench{self: self, bin: *bin, tmp: tmp, calls: *calls, packCalls: *packCalls, fsync: *fsync, baseFsync: *baseFsync, hc: &http.Client{Transport: tr}, gateEnv: gateEnv, baseBin: *baseline, tbxBin: *tbxark, idleDetail: *idleDetail}
	b.files = writeFiles(filepath.Join(tmp, "files"))
	b.fsync1 = measureFsync(tmp, 200, 0)
	b.fsyncIdle = measureFsync(tmp, 200, time.Millisecond)
	echo, url := startEchoHTTP(self)
	defer func() { _ = echo.Process.Kill(); _ = echo.Wait() }()
	b.echoURL, b.echoPID = url, echo.Process.Pid
	if *rounds > 0 {
		b.run(strings.Split(*eras, ","), *rounds)
	}
	if *starts > 0 {
		b.starts(*starts)
	}
	if *sessions > 0 {
		b.idle(*sessions)
	}
	if *profile != "" {
		b.profile(*profile)
	}
}

// bench holds the processes and clients of one run.
type bench struct {
	self, bin, tmp   string
	calls, packCalls int
	fsync            string
	gateEnv          []string
	// baseFsync, when set, is the baseline workspace's fsync (else fsync).
	baseFsync string

	echoURL string
	echoPID int
	gate    *gate
	hc      *http.Client
	maxRSS  int64
	// baseBin, when set, is measured beside bin in every round (baseGate).
	baseBin  string
	baseGate *gate
	baseRSS  int64
	// tbxBin, when set, is TBXark/mcp-proxy, measured beside bin (tbxGate).
	tbxBin  string
	tbxGate *gate
	tbxRSS  int64
	// files holds the inputs of the pack commands (cat, jq).
	files string
	// idleDetail opens /metrics (metricsOpen) for the idle-session runs.
	idleDetail, metricsOpen bool
	// fsync1 is one fsync of the audit's disk (p50; measureFsync), back
	// to back; fsyncIdle the same after a millisecond idle, the cadence
	// of a call at concurrency 1.
	fsync1, fsyncIdle time.Duration
}

// configs of one era, in the order they are measured and printed.
const (
	directHTTP = iota
	gateHTTP
	directStdio
	gateStdio
	baseHTTP  // the baseline toolgate (-baseline), when given
	baseStdio //
	tbxHTTP   // TBXark/mcp-proxy (-tbxark), when given
	tbxStdio  //
	nConfigs
)

var configNames = [nConfigs]string{"direct HTTP", "toolgate → HTTP", "direct stdio", "toolgate → stdio", "baseline → HTTP", "baseline → stdio", "TBXark → HTTP", "TBXark → stdio"}

// gated reports whether configuration c goes through a toolgate.
func gated(c int) bool { return c != directHTTP && c != directStdio }

// eraRun is one era's clients and what they measured.
type eraRun struct {
	era     string
	clients [nConfigs][]*client.Client
	// server lists the downstream's processes per configuration: toolgate
	// may run one stdio server per client session.
	server         [nConfigs]func() []int
	pack, basePack *client.Client
	res            [nConfigs][2]phase // [config][c1, c16]
	// per pack command (packCommands): through toolgate, through the
	// baseline, and the bare exec.
	packRes, basePRes, execRes [nPack]phase
}

// writeWorkspace writes the bench workspace into dir and returns its path.
func (b *bench) writeWorkspace(dir string, sessions int) string {
	return b.writeWorkspaceSynced(dir, sessions, b.fsync)
}

// writeWorkspaceSynced is writeWorkspace with the audit's fsync as given.
func (b *bench) writeWorkspaceSynced(dir string, sessions int, fsync string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	ws := filepath.Join(dir, "toolgate.yaml")
	y := workspaceYAML(b.echoURL, []string{b.self, "-role", "echo-stdio"}, b.files, fsync, sessions, b.metricsOpen)
	if err := os.WriteFile(ws, []byte(y), 0o600); err != nil {
		fatalf("%v", err)
	}
	return ws
}

// baselineWorkspace is the bench workspace for the baseline binary: as
// toolgate's, or without the session caps if the baseline predates them
// (it then has none).
func (b *bench) baselineWorkspace(dir string, sessions int) string {
	fsync := b.fsync
	if b.baseFsync != "" {
		fsync = b.baseFsync
	}
	ws := b.writeWorkspaceSynced(dir, sessions, fsync)
	out, err := exec.Command(b.baseBin, "check", "-w", ws).CombinedOutput()
	if err != nil && bytes.Contains(out, []byte(`unknown field "sessions"`)) {
		return b.writeWorkspaceSynced(dir, 0, fsync)
	}
	return ws
}

func (b *bench) run(eras []string, rounds int) {
	ws := b.writeWorkspace(filepath.Join(b.tmp, "load"), 64)
	b.gate = startToolgate(b.bin, ws, b.gateEnv...)
	defer b.gate.stop()
	if b.baseBin != "" {
		b.baseGate = startToolgate(b.baseBin, b.baselineWorkspace(filepath.Join(b.tmp, "baseline"), 64), b.gateEnv...)
		defer b.baseGate.stop()
	}
	if b.tbxBin != "" {
		b.tbxGate = b.startTBXark(b.tbxBin)
		defer b.tbxGate.stop()
	}

	runs := make([]*eraRun, len(eras))
	for i, era := range eras {
		runs[i] = b.open(strings.TrimSpace(era))
	}
	fmt.Printf("toolgate %s %s, fsync: %s; %d rounds × %d calls per configuration and concurrency; load %s\n",
		b.bin, strings.Join(b.gateEnv, " "), b.fsync, rounds, b.calls, loadavg())
	if b.baseGate != nil {
		fsync := b.fsync
		if b.baseFsync != "" {
			fsync = b.baseFsync
		}
		fmt.Printf("baseline %s, fsync: %s, measured in the same rounds\n", b.baseBin, fsync)
	}
	if b.tbxGate != nil {
		fmt.Printf("TBXark/mcp-proxy %s, measured in the same rounds\n", b.tbxBin)
	}
	for r := range rounds {
		for _, er := range runs {
			for ci, conc := range []int{1, 16} {
				for _, group := range [][]int{{directHTTP, gateHTTP, baseHTTP, tbxHTTP}, {directStdio, gateStdio, baseStdio, tbxStdio}} {
					for _, c := range group {
						if er.clients[c] != nil {
							er.res[c][ci].add(b.phase(er, c, conc, b.calls))
						}
					}
				}
			}
			for k := range nPack {
				er.packRes[k].add(b.packPhase(er.pack, b.gate, k))
				if b.baseGate != nil {
					er.basePRes[k].add(b.packPhase(er.basePack, b.baseGate, k))
				}
				er.execRes[k].add(b.execPhase(k))
			}
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done (load %s)\n", r+1, rounds, loadavg())
	}
	for _, er := range runs {
		b.report(er)
	}
	fmt.Printf("toolgate RSS, highest after a phase: %.1f MB\n", float64(b.maxRSS)/1024)
	if b.baseGate != nil {
		fmt.Printf("baseline RSS, highest after a phase: %.1f MB\n", float64(b.baseRSS)/1024)
	}
	if b.tbxGate != nil {
		fmt.Printf("TBXark RSS, highest after a phase: %.1f MB\n", float64(b.tbxRSS)/1024)
	}
	for _, er := range runs {
		for _, cls := range er.clients {
			for _, cl := range cls {
				cl.Close()
			}
		}
		er.pack.Close()
		if er.basePack != nil {
			er.basePack.Close()
		}
	}
}

// open starts one era's clients: 16 per configuration, one per worker
// (an HTTP session each; for direct stdio a server process each, as
// toolgate runs one per client session toward a session-era stdio
// server), so worker w of every configuration has a peer of its own.
func (b *bench) open(era string) *eraRun {
	er := &eraRun{era: era}
	urls := map[int]string{directHTTP: b.echoURL, gateHTTP: b.gate.base + "/mcp/echohttp", gateStdio: b.gate.base + "/mcp/echostdio"}
	if b.baseGate != nil {
		urls[baseHTTP], urls[baseStdio] = b.baseGate.base+"/mcp/echohttp", b.baseGate.base+"/mcp/echostdio"
	}
	if b.tbxGate != nil {
		urls[tbxHTTP], urls[tbxStdio] = tbxarkRoute(b.tbxGate, "echohttp"), tbxarkRoute(b.tbxGate, "echostdio")
	}
	for c, url := range urls {
		token := benchToken
		if c == directHTTP {
			token = ""
		}
		for range 16 {
			er.clients[c] = append(er.clients[c], openHTTP(url, token, era, b.hc))
		}
	}
	var stdioPIDs []int
	for range 16 {
		cl, pid := openStdio([]string{b.self, "-role", "echo-stdio"}, era)
		er.clients[directStdio] = append(er.clients[directStdio], cl)
		stdioPIDs = append(stdioPIDs, pid)
	}
	er.pack = openHTTP(b.gate.base+"/mcp/bench", benchToken, era, b.hc)
	packs := []*client.Client{er.pack}
	if b.baseGate != nil {
		er.basePack = openHTTP(b.baseGate.base+"/mcp/bench", benchToken, era, b.hc)
		packs = append(packs, er.basePack)
	}
	for _, cls := range er.clients {
		for _, cl := range cls {
			for range 20 {
				if err := echoCall(cl); err != nil {
					fatalf("warm-up (%s): %v", era, err)
				}
			}
		}
	}
	for _, pk := range packs {
		for k := range nPack {
			for range 5 {
				if err := packCall(pk, k); err != nil {
					fatalf("warm-up pack %s (%s): %v", packCommands[k].id, era, err)
				}
			}
		}
	}
	stdioOf := func(g *gate) func() []int {
		f := func() []int {
			pids, err := findDescendants(g.pid, "echo-stdio", time.Now().Add(10*time.Second))
			if err != nil {
				fatalf("%v", err)
			}
			return pids
		}
		f()
		return f
	}
	fixed := func(pids ...int) func() []int { return func() []int { return pids } }
	er.server = [nConfigs]func() []int{directHTTP: fixed(b.echoPID), gateHTTP: fixed(b.echoPID), directStdio: fixed(stdioPIDs...), gateStdio: stdioOf(b.gate)}
	if b.baseGate != nil {
		er.server[baseHTTP], er.server[baseStdio] = fixed(b.echoPID), stdioOf(b.baseGate)
	}
	if b.tbxGate != nil {
		er.server[tbxHTTP], er.server[tbxStdio] = fixed(b.echoPID), stdioOf(b.tbxGate)
	}
	return er
}

// phase runs n echo calls of configuration c at conc.
func (b *bench) phase(er *eraRun, c, conc, n int) phase {
	cls := er.clients[c]
	gatePID := 0
	switch c {
	case gateHTTP, gateStdio:
		gatePID = b.gate.pid
	case baseHTTP, baseStdio:
		gatePID = b.baseGate.pid
	case tbxHTTP, tbxStdio:
		gatePID = b.tbxGate.pid
	}
	p := runPhase(conc, n, gatePID, er.server[c](), func(w int) error { return echoCall(cls[w%len(cls)]) })
	switch c {
	case gateHTTP, gateStdio:
		b.maxRSS = max(b.maxRSS, rssKB(gatePID))
	case baseHTTP, baseStdio:
		b.baseRSS = max(b.baseRSS, rssKB(gatePID))
	case tbxHTTP, tbxStdio:
		b.tbxRSS = max(b.tbxRSS, rssKB(gatePID))
	}
	return p
}

// packPhase runs pack command k through g, one call at a time.
func (b *bench) packPhase(cl *client.Client, g *gate, k int) phase {
	return runPhase(1, b.packCalls, g.pid, nil, func(int) error { return packCall(cl, k) })
}

// execPhase runs pack command k's program directly, as bare exec, packCalls
// times; its CPU (the children's, from getrusage) is reported as the
// server's.
func (b *bench) execPhase(k int) phase {
	pc := packCommands[k]
	argv := pc.bare(b.files)
	c0 := childrenCPU()
	p := runPhase(1, b.packCalls, 0, nil, func(int) error {
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err == nil && string(out) != pc.want {
			err = fmt.Errorf("%s printed %q", argv[0], out)
		}
		return err
	})
	p.server = childrenCPU() - c0
	return p
}

// envList is a repeatable KEY=VALUE flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }

func (e *envList) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}
