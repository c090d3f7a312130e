package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The targets of issue 26 (fsync: always, full decision and audit), as
// ratios to what the same run measured: TBXark/mcp-proxy (-tbxark), the
// bare exec, one fsync of the disk the audit is on, a Go hello-world.
const (
	targetRateStdio = 0.8  // c16 calls/s ratio to direct ≥ 0.8 × TBXark's, stdio (HTTP: ≥ TBXark's)
	targetPackJQ    = 1.3  // a jq pack call's p50 and CPU ≤ 1.3 × the bare exec's
	targetPackFast  = 1000 // µs a cat pack call's p50 may add to the bare exec's, besides one fsync
	targetIdleMB    = 50.0 // toolgate RSS with the idle sessions open
	targetStart     = 3.0  // a toolgate process's start ≤ 3 × a Go hello-world's
)

func (b *bench) report(er *eraRun) {
	mode := "session: initialize, Mcp-Session-Id"
	if er.era == eraStateless {
		mode = "stateless: server/discover, _meta on every request"
	}
	fmt.Printf("\n== client era %s (%s) ==\n", er.era, mode)
	fmt.Printf("%-17s | %44s | %44s | %s\n", "", "c=1", "c=16", "all calls")
	fmt.Printf("%-17s |%s |%s | %8s %8s %8s\n", "configuration", phaseHeader, phaseHeader, "gateway", "server", "client")
	for c := range nConfigs {
		if er.clients[c] == nil {
			continue
		}
		all := both(er.res[c])
		fmt.Printf("%-17s |%s |%s | %8s %8.0f %8.0f\n", configNames[c], phaseCols(&er.res[c][0], gated(c)), phaseCols(&er.res[c][1], gated(c)),
			cpuCol(&all, gated(c)), all.perCall(all.server), all.perCall(all.client))
	}
	fmt.Println("  (latency in µs; CPU in µs per call: the gateway's own (toolgate, baseline or TBXark), the echo server's, the bench client's)")
	fmt.Printf("%-17s | %8s %8s %10s | CPU µs per call\n", "pack command", "p50 µs", "p99 µs", "calls/s")
	for k, pc := range packCommands {
		p, x := &er.packRes[k], &er.execRes[k]
		fmt.Printf("%-17s | %8.0f %8.0f %10.0f | toolgate %.0f + its children %.0f = %.0f, client %.0f\n", "toolgate "+pc.id,
			us(p.quantile(.5)), us(p.quantile(.99)), p.rate(), p.perCall(p.gateSelf), p.perCall(p.gateChildren), p.perCall(p.gateSelf+p.gateChildren), p.perCall(p.client))
		if b.baseGate != nil {
			bp := &er.basePRes[k]
			fmt.Printf("%-17s | %8.0f %8.0f %10.0f | baseline %.0f + its children %.0f = %.0f\n", "baseline "+pc.id,
				us(bp.quantile(.5)), us(bp.quantile(.99)), bp.rate(), bp.perCall(bp.gateSelf), bp.perCall(bp.gateChildren), bp.perCall(bp.gateSelf+bp.gateChildren))
		}
		fmt.Printf("%-17s | %8.0f %8.0f %10.0f | the command %.0f (bench's fork/exec %.0f)\n", "bare "+pc.id,
			us(x.quantile(.5)), us(x.quantile(.99)), x.rate(), x.perCall(x.server), x.perCall(x.client))
	}
	fmt.Printf("  (pack CPU: toolgate's own and its waited-for children's, /proc/<pid>/stat in 10 ms ticks; the bare command's from getrusage)\n")
	fmt.Printf("one fsync of the audit's disk: p50 %.0f µs back to back, %.0f µs after 1 ms idle (a c1 call's cadence)\n", us(b.fsync1), us(b.fsyncIdle))

	fmt.Printf("targets (issue 26), era %s:\n", er.era)
	if b.tbxGate != nil {
		for _, t := range []struct {
			direct, through, tbx int
			kind                 string
			rate                 float64
		}{{directHTTP, gateHTTP, tbxHTTP, "HTTP", 1}, {directStdio, gateStdio, tbxStdio, "stdio", targetRateStdio}} {
			g, x := both(er.res[t.through]), both(er.res[t.tbx])
			check(fmt.Sprintf("CPU/call ÷ TBXark's (%s)", t.kind), g.perCall(g.gateSelf)/x.perCall(x.gateSelf), "≤", 1,
				fmt.Sprintf("toolgate %.0f µs, TBXark %.0f µs", g.perCall(g.gateSelf), x.perCall(x.gateSelf)))
			gr := er.res[t.through][1].rate() / er.res[t.direct][1].rate()
			xr := er.res[t.tbx][1].rate() / er.res[t.direct][1].rate()
			check(fmt.Sprintf("c16 ratio to direct ÷ TBXark's (%s)", t.kind), gr/xr, "≥", t.rate, fmt.Sprintf("toolgate %.2f, TBXark %.2f", gr, xr))
			d50 := us(er.res[t.direct][0].quantile(.5))
			ga, xa := us(er.res[t.through][0].quantile(.5))-d50, us(er.res[t.tbx][0].quantile(.5))-d50
			check(fmt.Sprintf("c1 p50 added − TBXark's − one fsync, µs (%s)", t.kind), ga-xa-us(b.fsync1), "≤", 0,
				fmt.Sprintf("toolgate +%.0f µs, TBXark +%.0f µs, fsync %.0f µs", ga, xa, us(b.fsync1)))
		}
	}
	for k, pc := range packCommands {
		p, x := &er.packRes[k], &er.execRes[k]
		switch pc.id {
		case "jq":
			check("jq pack call p50 ÷ bare", us(p.quantile(.5))/us(x.quantile(.5)), "≤", targetPackJQ, "")
			check("jq pack call CPU (toolgate + all it runs) ÷ the command's", p.perCall(p.gateSelf+p.gateChildren)/x.perCall(x.server), "≤", targetPackJQ, "")
		case "cat":
			check("cat pack call p50 − bare − one fsync, µs", us(p.quantile(.5))-us(x.quantile(.5))-us(b.fsync1), "≤", targetPackFast, "")
		}
	}
	if b.baseGate == nil {
		return
	}
	fmt.Printf("toolgate ÷ baseline, era %s (same rounds; issue 21: CPU within 5 %%):\n", er.era)
	for _, t := range []struct {
		kind       string
		gate, base int
	}{{"HTTP", gateHTTP, baseHTTP}, {"stdio", gateStdio, baseStdio}} {
		g, bs := both(er.res[t.gate]), both(er.res[t.base])
		fmt.Printf("  %-52s %8.2f  [%.0f µs vs %.0f µs; c1 %.0f vs %.0f, c16 %.0f vs %.0f]\n", "toolgate CPU/call ("+t.kind+")", g.perCall(g.gateSelf)/bs.perCall(bs.gateSelf),
			g.perCall(g.gateSelf), bs.perCall(bs.gateSelf), er.res[t.gate][0].perCall(er.res[t.gate][0].gateSelf), er.res[t.base][0].perCall(er.res[t.base][0].gateSelf),
			er.res[t.gate][1].perCall(er.res[t.gate][1].gateSelf), er.res[t.base][1].perCall(er.res[t.base][1].gateSelf))
		fmt.Printf("  %-52s %8.2f\n", "c16 calls/s ("+t.kind+")", er.res[t.gate][1].rate()/er.res[t.base][1].rate())
		fmt.Printf("  %-52s %8.2f\n", "c1 p50 ("+t.kind+")", us(er.res[t.gate][0].quantile(.5))/us(er.res[t.base][0].quantile(.5)))
	}
	for k, pc := range packCommands {
		p, bp := &er.packRes[k], &er.basePRes[k]
		fmt.Printf("  %-52s %8.2f  [p50 %.2f; %.0f µs vs %.0f µs]\n", "pack "+pc.id+" CPU incl. children", p.perCall(p.gateSelf+p.gateChildren)/bp.perCall(bp.gateSelf+bp.gateChildren),
			us(p.quantile(.5))/us(bp.quantile(.5)), p.perCall(p.gateSelf+p.gateChildren), bp.perCall(bp.gateSelf+bp.gateChildren))
	}
}

// both is a configuration's c1 and c16 phases together.
func both(r [2]phase) phase {
	var all phase
	all.add(r[0])
	all.add(r[1])
	return all
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

// idle measures n idle session-era sessions on a fresh gateway each: the
// toolgate (and the baseline's) pack surface and proxied HTTP server, and
// TBXark's proxied HTTP server.
func (b *bench) idle(n int) {
	fmt.Printf("\n== %d idle sessions (session era, initialize + initialized, no stream), fresh gateway each ==\n", n)
	type target struct {
		name, bin, surface string
	}
	targets := []target{{"toolgate", b.bin, "bench"}, {"toolgate", b.bin, "echohttp"}}
	if b.baseBin != "" {
		targets = append(targets, target{"baseline", b.baseBin, "bench"}, target{"baseline", b.baseBin, "echohttp"})
	}
	if b.tbxBin != "" {
		targets = append(targets, target{"TBXark", b.tbxBin, "echohttp"})
	}
	for _, t := range targets {
		var g *gate
		url := ""
		switch {
		case t.name == "TBXark":
			g = b.startTBXark(t.bin)
			url = tbxarkRoute(g, t.surface)
		case t.name == "baseline":
			g = startToolgate(t.bin, b.baselineWorkspace(filepath.Join(b.tmp, "idle-base-"+t.surface), n+16), b.gateEnv...)
			url = g.base + "/mcp/" + t.surface
		default:
			b.metricsOpen = b.idleDetail
			g = startToolgate(t.bin, b.writeWorkspace(filepath.Join(b.tmp, "idle-"+t.surface), n+16), b.gateEnv...)
			b.metricsOpen = false
			url = g.base + "/mcp/" + t.surface
		}
		r := idleSessions(g, url, n, t.name == "TBXark")
		g.stop()
		what := fmt.Sprintf("%s RSS, MB, %d sessions on %s", t.name, n, t.surface)
		note := fmt.Sprintf("%.1f MB with one session; %.1f KB per session", float64(r.beforeKB)/1024, float64(r.afterKB-r.beforeKB)/float64(n))
		if r.runtime != "" {
			note += "; " + r.runtime
		}
		if t.name == "TBXark" {
			note += "; stateless: it keeps no session"
		}
		if t.name == "toolgate" {
			check(what, float64(r.afterKB)/1024, "≤", targetIdleMB, note)
		} else {
			fmt.Printf("  %-52s %8.2f  [%s]\n", what, float64(r.afterKB)/1024, note)
		}
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
	// The profile is of this toolgate alone: the rounds' gateways (the
	// baseline's, TBXark's) have stopped by now.
	saved, savedBase, savedTBX := b.gate, b.baseGate, b.tbxGate
	b.gate, b.baseGate, b.tbxGate = g, nil, nil
	er := b.open(eraSession)
	for _, c := range []int{gateHTTP, gateStdio} {
		for _, conc := range []int{1, 16} {
			b.phase(er, c, conc, 2*b.calls)
		}
	}
	for k := range nPack {
		er.packRes[k] = b.packPhase(er.pack, g, k)
	}
	for _, cls := range er.clients {
		for _, cl := range cls {
			cl.Close()
		}
	}
	er.pack.Close()
	g.stop()
	b.gate, b.baseGate, b.tbxGate = saved, savedBase, savedTBX
	if st, err := os.Stat(abs); err != nil || st.Size() == 0 {
		log, _ := os.ReadFile(filepath.Join(g.dir, "toolgate.log"))
		fatalf("no CPU profile at %s (does this toolgate honour TOOLGATE_CPUPROFILE?)\n%s", abs, strings.TrimSpace(string(log)))
	}
	fmt.Printf("\nCPU profile of toolgate under load (%d calls per downstream at c1 and c16 each, then %d pack calls): %s\n  go tool pprof -top %s %s\n",
		2*b.calls, b.packCalls, abs, b.bin, abs)
}
