package e2e

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The official MCP conformance suite, run against the conformance server
// (e2e/conformance-server, mcp-go v1.2.1) directly and through toolgate,
// compared check id by check id: every check that passes directly must
// pass through toolgate too, or be a loss recorded in
// testdata/conformance/<suite>/<case>.json (see conformance_harness_test.go).
//
// One case: go test ./e2e -run 'TestConformanceNext/2026-07-28/both-http' -v
// Record:   ... -update-conformance     No recorded loss allowed: ... -conformance-no-losses
//
// A departure from the record fails the test only if a second attempt
// shows it too (the suite has timing-dependent checks, and so does a
// proxy); -update-conformance records two attempts, keeping a loss only
// if both show it.

// Downstream kinds: the conformance server speaking both eras, only 2025
// (-era 2025) or only 2026-07-28 (-era 2026), or both eras answering as
// the suite's own reference server does (-like-reference: discover lists
// only 2026-07-28 while initialize is served, subscriptions/listen is
// newline-delimited JSON under application/json), each over streamable
// HTTP and over stdio. The suite speaks HTTP only, so a stdio downstream
// is compared with the same server's direct run over HTTP. No kind's name
// is part of another's, so -run selects exactly one.
const (
	dsBothHTTP      = "both-http"
	dsBothStdio     = "both-stdio"
	ds2025HTTP      = "2025only-http"
	ds2025Stdio     = "2025only-stdio"
	ds2026HTTP      = "2026only-http"
	ds2026Stdio     = "2026only-stdio"
	dsRefHTTP       = "likeref-http"
	dsRefStdio      = "likeref-stdio"
	confEraBoth     = "both"
	confEra2025     = "2025"
	confEra2026     = "2026"
	confEraRef      = "likeref"
	confAgentGrants = "server:confboth, server:confbothstdio, server:conf2025, server:conf2025stdio, server:conf2026, server:conf2026stdio, server:confref, server:confrefstdio"
)

// confKind is one downstream kind: the era its server speaks and the
// toolgate surface that fronts it.
type confKind struct {
	era, surface string
}

func confKinds() map[string]confKind {
	return map[string]confKind{
		dsBothHTTP: {confEraBoth, "confboth"}, dsBothStdio: {confEraBoth, "confbothstdio"},
		ds2025HTTP: {confEra2025, "conf2025"}, ds2025Stdio: {confEra2025, "conf2025stdio"},
		ds2026HTTP: {confEra2026, "conf2026"}, ds2026Stdio: {confEra2026, "conf2026stdio"},
		dsRefHTTP: {confEraRef, "confref"}, dsRefStdio: {confEraRef, "confrefstdio"},
	}
}

// confEraFlags are the conformance server's flags for a kind's era.
func confEraFlags(era string) []string {
	if era == confEraRef {
		return []string{"-era", confEraBoth, "-like-reference"}
	}
	return []string{"-era", era}
}

// oneEra reports whether a kind's server speaks one era only (its runs
// are also compared with the both-era server's: what is not bridged).
func oneEra(era string) bool { return era == confEra2025 || era == confEra2026 }

// confBench is what a conformance test runs against: one server per era
// for the direct runs, and toolgate (a per-agent instance, open grants)
// fronting a second server per era over HTTP and a third over stdio that
// it launches itself. Direct and toolgate runs use different server
// processes, so that they can go side by side without seeing each other's
// list changes.
type confBench struct {
	direct map[string]string // era → URL the suite runs against directly
	via    map[string]string // downstream kind → toolgate's endpoint for it

	mu      sync.Mutex
	results map[string]confRun // direct runs, by era, suite and requirements
}

func startConfBench(t *testing.T) *confBench {
	t.Helper()
	bin := conformanceServer(t)
	b := &confBench{direct: map[string]string{}, via: map[string]string{}, results: map[string]confRun{}}
	var servers strings.Builder
	for _, era := range []string{confEraBoth, confEra2025, confEra2026, confEraRef} {
		b.direct[era] = startConfHTTP(t, confEraFlags(era)...)
	}
	for kind, k := range confKinds() {
		servers.WriteString("  - id: " + k.surface + "\n")
		if strings.HasSuffix(kind, "-stdio") {
			servers.WriteString("    command: [" + bin + ", -stdio, " + strings.Join(confEraFlags(k.era), ", ") + "]\n")
		} else {
			servers.WriteString("    url: " + startConfHTTP(t, confEraFlags(k.era)...) + "\n")
		}
		servers.WriteString("    permission: open\n    trust_annotations: true\n")
	}
	ws := writeFile(t, t.TempDir(), "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  # The suite opens a session per scenario and ends few of them.
  sessions: {max_per_agent: 1000}
mcp_servers:
`+servers.String()+`agents:
  - id: tester
    token: {env: TESTER_TOKEN}
    grants: [`+confAgentGrants+`]
`)
	d := startDaemon(t, []string{"TESTER_TOKEN=" + testerToken}, "-w", ws, "--agent", "tester")
	// The suite sends no Authorization header; a harness would (its MCP
	// config carries the token). This shim on loopback adds it.
	base := withBearer(t, d.base, testerToken)
	for kind, k := range confKinds() {
		b.via[kind] = base + "/mcp/" + k.surface
	}
	return b
}

// runCase runs a case (confCase.judge) with attempts made by attempt.
func (b *confBench) runCase(t *testing.T, c confCase, args ...string) {
	t.Helper()
	first, err := b.attempt(t, c, true, args...)
	if err != nil {
		t.Fatal(err)
	}
	c.judge(t, first, func() confAttempt {
		again, err := b.attempt(t, c, false, args...)
		if err != nil {
			t.Fatal(err)
		}
		return again
	})
}

// attempt runs the suite through toolgate and, side by side, directly
// against the server of the same era and (for a one-era downstream) the
// server of both eras. With cached, a direct run is made once per test and
// shared by the cases that need it; without, every run is fresh.
func (b *confBench) attempt(t *testing.T, c confCase, cached bool, args ...string) (confAttempt, error) {
	t.Helper()
	eras := []string{confKinds()[c.downstream].era}
	if oneEra(eras[0]) {
		eras = append(eras, confEraBoth)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		runs = map[string]confRun{}
	)
	for _, era := range eras {
		key := era + " " + c.suite.version + " " + c.requirements
		b.mu.Lock()
		r, ok := b.results[key]
		b.mu.Unlock()
		if ok && cached {
			mu.Lock()
			runs[era] = r
			mu.Unlock()
			continue
		}
		wg.Add(1)
		dir := t.TempDir()
		go func() {
			defer wg.Done()
			r, err := c.suite.run(b.direct[era], dir, args...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("direct run (%s era server): %w", era, err))
				return
			}
			runs[era] = r
			if cached {
				b.mu.Lock()
				b.results[key] = r
				b.mu.Unlock()
			}
		}()
	}
	via, viaErr := c.suite.run(b.via[c.downstream], t.TempDir(), args...)
	wg.Wait()
	if viaErr != nil {
		errs = append(errs, fmt.Errorf("run through toolgate: %w", viaErr))
	}
	if len(errs) > 0 {
		return confAttempt{}, errors.Join(errs...)
	}
	a := confAttempt{direct: runs[eras[0]], via: via}
	if len(eras) > 1 {
		a.bothEras = runs[confEraBoth]
	}
	return a, nil
}

// TestConformanceNext runs conformance 0.2.0-alpha.12 with each frozen
// requirement set (2026-07-28: stateless, MRTR, caching, header
// validation, subscriptions/listen, the tasks extension unscored;
// 2025-11-25: initialize and sessions, SSE polling), against each
// downstream kind, directly and through toolgate. The likeref kinds hold
// toolgate to through == direct against a server that behaves as the
// suite's reference server: a 2025-11-25 client reaches it in a session of
// its own (not bridged, whatever discover lists) and a listen stream is
// relayed frame by frame.
func TestConformanceNext(t *testing.T) {
	// Its own servers and toolgate instance (startConfBench), so it runs
	// beside the other tests; its cases stay one after another, as they
	// share those servers.
	t.Parallel()
	suite := conformanceSuiteIn(t, "conformance-next", "0.2.0-alpha.12")
	bench := startConfBench(t)
	for _, set := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(set, func(t *testing.T) {
			for _, ds := range []string{dsBothHTTP, dsBothStdio, ds2025HTTP, ds2025Stdio, ds2026HTTP, ds2026Stdio, dsRefHTTP, dsRefStdio} {
				t.Run(ds, func(t *testing.T) {
					c := confCase{suite: suite, requirements: set, downstream: ds,
						file: filepath.Join("testdata", "conformance", suite.version, set+"-"+ds+".json")}
					bench.runCase(t, c, "--requirements", set)
				})
			}
		})
	}
}

// TestConformanceThroughProxy runs conformance 0.1.16 (its default active
// scenarios, 2025-11-25 and earlier) against the both-era and 2025-only
// downstreams, directly and through toolgate.
func TestConformanceThroughProxy(t *testing.T) {
	t.Parallel() // its own bench, as TestConformanceNext
	suite := conformanceSuiteIn(t, "conformance", "0.1.16")
	bench := startConfBench(t)
	for _, ds := range []string{dsBothHTTP, dsBothStdio, ds2025HTTP, ds2025Stdio} {
		t.Run(ds, func(t *testing.T) {
			c := confCase{suite: suite, downstream: ds, file: filepath.Join("testdata", "conformance", suite.version, ds+".json")}
			bench.runCase(t, c)
		})
	}
}
