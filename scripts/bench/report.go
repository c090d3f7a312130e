package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The targets (fsync: always, full decision and audit).
const (
	targetCPUHTTP   = 1.4  // toolgate CPU/call ÷ echo server CPU/call, HTTP downstream
	targetCPUStdio  = 1.0  // the same, stdio downstream
	targetRateHTTP  = 0.5  // c16 calls/s ÷ direct, HTTP
	targetRateStdio = 0.8  // c16 calls/s ÷ direct, stdio
	targetP50Added  = 150  // µs added at p50, c1
	targetPack      = 1.1  // pack call p50 ÷ bare exec p50
	targetIdleMB    = 50.0 // toolgate RSS with the idle sessions open
)

func (b *bench) report(er *eraRun) {
	mode := "session: initialize, Mcp-Session-Id"
	if er.era == eraStateless {
		mode = "stateless: server/discover, _meta on every request"
	}
	fmt.Printf("\n== client era %s (%s) ==\n", er.era, mode)
	fmt.Printf("%-17s | %44s | %44s | %s\n", "", "c=1", "c=16", "all calls")
	fmt.Printf("%-17s |%s |%s | %8s %8s %8s\n", "configuration", phaseHeader, phaseHeader, "toolgate", "server", "client")
	for c := range nConfigs {
		if er.clients[c] == nil {
			continue
		}
		var all phase
		all.add(er.res[c][0])
		all.add(er.res[c][1])
		fmt.Printf("%-17s |%s |%s | %8s %8.0f %8.0f\n", configNames[c], phaseCols(&er.res[c][0], gated(c)), phaseCols(&er.res[c][1], gated(c)),
			cpuCol(&all, gated(c)), all.perCall(all.server), all.perCall(all.client))
	}
	fmt.Println("  (latency in µs; CPU in µs per call: toolgate's own, the echo server's, the bench client's)")
	p, x := &er.packRes, &er.execRes
	fmt.Printf("%-17s | %8.0f %8.0f %10.0f | CPU µs/call: toolgate %.0f + its children %.0f, client %.0f\n", "pack call",
		us(p.quantile(.5)), us(p.quantile(.99)), p.rate(), p.perCall(p.gateSelf), p.perCall(p.gateChildren), p.perCall(p.client))
	fmt.Printf("%-17s | %8.0f %8.0f %10.0f | CPU µs/call: bench %.0f + the command %.0f\n", "bare exec",
		us(x.quantile(.5)), us(x.quantile(.99)), x.rate(), x.perCall(x.client), x.perCall(x.server))

	fmt.Printf("targets, era %s:\n", er.era)
	for _, t := range []struct {
		direct, through int
		kind            string
		cpu, rate       float64
	}{{directHTTP, gateHTTP, "HTTP", targetCPUHTTP, targetRateHTTP}, {directStdio, gateStdio, "stdio", targetCPUStdio, targetRateStdio}} {
		var d, g phase
		d.add(er.res[t.direct][0])
		d.add(er.res[t.direct][1])
		g.add(er.res[t.through][0])
		g.add(er.res[t.through][1])
		gateCPU, echoCPU, echoBehind := g.perCall(g.gateSelf), d.perCall(d.server), g.perCall(g.server)
		check(fmt.Sprintf("toolgate CPU/call ÷ echo server CPU/call (%s)", t.kind), gateCPU/echoCPU, "≤", t.cpu,
			fmt.Sprintf("toolgate %.0f µs; echo %.0f µs direct, %.0f µs behind toolgate", gateCPU, echoCPU, echoBehind))
		check(fmt.Sprintf("c16 calls/s ÷ direct (%s)", t.kind), er.res[t.through][1].rate()/er.res[t.direct][1].rate(), "≥", t.rate, "")
		check(fmt.Sprintf("p50 added at c1 (%s), µs", t.kind), us(er.res[t.through][0].quantile(.5))-us(er.res[t.direct][0].quantile(.5)), "≤", targetP50Added, "")
	}
	check("pack call p50 ÷ bare exec p50", us(p.quantile(.5))/us(x.quantile(.5)), "≤", targetPack, "")
	if b.baseGate == nil {
		return
	}
	bp := &er.basePRes
	fmt.Printf("%-17s | %8.0f %8.0f %10.0f | CPU µs/call: baseline %.0f + its children %.0f\n", "baseline pack", us(bp.quantile(.5)), us(bp.quantile(.99)), bp.rate(), bp.perCall(bp.gateSelf), bp.perCall(bp.gateChildren))
	fmt.Printf("toolgate ÷ baseline, era %s (same rounds):\n", er.era)
	for _, t := range []struct {
		kind       string
		gate, base int
	}{{"HTTP", gateHTTP, baseHTTP}, {"stdio", gateStdio, baseStdio}} {
		var g, bs phase
		g.add(er.res[t.gate][0])
		g.add(er.res[t.gate][1])
		bs.add(er.res[t.base][0])
		bs.add(er.res[t.base][1])
		fmt.Printf("  %-52s %8.2f  [%.0f µs vs %.0f µs; c1 %.0f vs %.0f, c16 %.0f vs %.0f]\n", "toolgate CPU/call ("+t.kind+")", g.perCall(g.gateSelf)/bs.perCall(bs.gateSelf),
			g.perCall(g.gateSelf), bs.perCall(bs.gateSelf), er.res[t.gate][0].perCall(er.res[t.gate][0].gateSelf), er.res[t.base][0].perCall(er.res[t.base][0].gateSelf),
			er.res[t.gate][1].perCall(er.res[t.gate][1].gateSelf), er.res[t.base][1].perCall(er.res[t.base][1].gateSelf))
		fmt.Printf("  %-52s %8.2f\n", "c16 calls/s ("+t.kind+")", er.res[t.gate][1].rate()/er.res[t.base][1].rate())
		fmt.Printf("  %-52s %8.2f\n", "c1 p50 ("+t.kind+")", us(er.res[t.gate][0].quantile(.5))/us(er.res[t.base][0].quantile(.5)))
	}
	fmt.Printf("  %-52s %8.2f  [CPU incl. children %.0f µs vs %.0f µs]\n", "pack call p50", us(p.quantile(.5))/us(bp.quantile(.5)),
		p.perCall(p.gateSelf+p.gateChildren), bp.perCall(bp.gateSelf+bp.gateChildren))
}

const phaseHeader = "  p50 µs   p99 µs  calls/s toolgate   server"

// phaseCols is one phase's columns under phaseHeader.
func phaseCols(p *phase, gated bool) string {
	return fmt.Sprintf(" %7.0f %8.0f %8.0f %8s %8.0f", us(p.quantile(.5)), us(p.quantile(.99)), p.rate(), cpuCol(p, gated), p.perCall(p.server))
}

func cpuCol(p *phase, gated bool) string {
	if !gated {
		return "-"
	}
	return fmt.Sprintf("%.0f", p.perCall(p.gateSelf))
}

func check(what string, got float64, op string, want float64, note string) {
	ok := (op == "≤" && got <= want) || (op == "≥" && got >= want)
	verdict := "met"
	if !ok {
		verdict = "MISSED"
	}
	if note != "" {
		note = "  [" + note + "]"
	}
	fmt.Printf("  %-52s %8.2f  (%s %g) %s%s\n", what, got, op, want, verdict, note)
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// idle measures n idle session-era sessions on a fresh toolgate, once on
// the pack surface and once on the proxied HTTP surface.
func (b *bench) idle(n int) {
	fmt.Printf("\n== %d idle sessions (session era, initialize + initialized, no stream), fresh toolgate each ==\n", n)
	for _, surface := range []string{"bench", "echohttp"} {
		ws := b.writeWorkspace(filepath.Join(b.tmp, "idle-"+surface), n+16)
		g := startToolgate(b.bin, ws, b.gateEnv...)
		r := idleSessions(g, surface, n)
		g.stop()
		check(fmt.Sprintf("toolgate RSS, MB, %d sessions on /mcp/%s", n, surface), float64(r.afterKB)/1024, "≤", targetIdleMB,
			fmt.Sprintf("%.1f MB with one session; %.1f KB per session", float64(r.beforeKB)/1024, float64(r.afterKB-r.beforeKB)/float64(n)))
	}
}

// profile runs a separate toolgate with TOOLGATE_CPUPROFILE=file under
// load on both downstreams (session era; 2×calls at c1 and 2×calls at c16
// on each), then the pack calls, so the profile is of calls, not of the
// benchmark's other phases.
func (b *bench) profile(file string) {
	abs, err := filepath.Abs(file)
	if err != nil {
		fatalf("%v", err)
	}
	ws := b.writeWorkspace(filepath.Join(b.tmp, "profile"), 64)
	g := startToolgate(b.bin, ws, append([]string{"TOOLGATE_CPUPROFILE=" + abs}, b.gateEnv...)...)
	saved := b.gate
	b.gate = g
	er := b.open(eraSession)
	for _, c := range []int{gateHTTP, gateStdio} {
		for _, conc := range []int{1, 16} {
			b.phase(er, c, conc, 2*b.calls)
		}
	}
	er.packRes = b.packPhase(er.pack, g)
	for _, cls := range er.clients {
		for _, cl := range cls {
			cl.Close()
		}
	}
	er.pack.Close()
	g.stop()
	b.gate = saved
	if st, err := os.Stat(abs); err != nil || st.Size() == 0 {
		log, _ := os.ReadFile(filepath.Join(g.dir, "toolgate.log"))
		fatalf("no CPU profile at %s (does this toolgate honour TOOLGATE_CPUPROFILE?)\n%s", abs, strings.TrimSpace(string(log)))
	}
	fmt.Printf("\nCPU profile of toolgate under load (%d calls per downstream at c1 and c16 each, then %d pack calls): %s\n  go tool pprof -top %s %s\n",
		2*b.calls, b.packCalls, abs, b.bin, abs)
}
