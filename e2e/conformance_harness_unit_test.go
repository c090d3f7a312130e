package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConfResults: the suite's result folders are read one check id per
// scenario, a failure among several reports of an id wins, INFO is not a
// check, and a scenario that threw (no checks.json) is one failed check.
func TestConfResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "server-caching-2026-12-01T09-29-48-682Z/checks.json", `[
  {"id": "sep-2549-ttl", "status": "SUCCESS"},
  {"id": "wire-schema-valid", "status": "SUCCESS"},
  {"id": "wire-schema-valid", "status": "FAILURE", "errorMessage": "result.resultType missing"},
  {"id": "outgoing-request", "status": "INFO"},
  {"id": "sep-2549-should", "status": "WARNING"},
  {"id": "skipped-one", "status": "SKIPPED"}
]`)
	if err := os.MkdirAll(filepath.Join(dir, "server-tasks-lifecycle-2026-12-01T09-29-49-000Z"), 0o755); err != nil {
		t.Fatal(err)
	}
	run, err := readConfResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"caching/sep-2549-ttl":         checkPass,
		"caching/wire-schema-valid":    checkFail,
		"caching/sep-2549-should":      checkWarn,
		"caching/skipped-one":          checkSkip,
		"tasks-lifecycle/scenario-ran": checkFail,
	}
	if len(run.Checks) != len(want) {
		t.Errorf("checks = %v, want %v", run.Checks, want)
	}
	for k, o := range want {
		if run.Checks[k] != o {
			t.Errorf("%s = %q, want %q", k, run.Checks[k], o)
		}
	}
	if run.Why["caching/wire-schema-valid"] != "result.resultType missing" || run.Why["caching/sep-2549-ttl"] != "" {
		t.Errorf("why = %v", run.Why)
	}
	if c := run.counts(); c != (confCounts{ChecksPassed: 1, Checks: 3, SuitePassed: 2, SuiteFailed: 2}) {
		t.Errorf("counts = %+v", c)
	}
	writeFile(t, dir, "server-broken-2026-12-01T09-29-49-000Z/checks.json", `{not json`)
	if _, err := readConfResults(dir); err == nil {
		t.Error("a checks.json that is not JSON was accepted")
	}
}

// TestConfCompare: a pair of runs is held to the recorded file — new
// losses, lost direct passes and stale recorded losses are reported;
// recorded losses are tolerated unless -conformance-no-losses.
func TestConfCompare(t *testing.T) {
	t.Parallel()
	run := func(kv ...string) confRun {
		r := confRun{Checks: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			r.Checks[kv[i]] = kv[i+1]
		}
		return r
	}
	want := confExpected{DirectPass: []string{"s/a", "s/b", "s/c"}, Lost: []string{"s/b"}}
	cases := []struct {
		name        string
		direct, via confRun
		noLosses    bool
		wantMsgs    []string // substrings, one per message, in order
	}{
		{"as recorded", run("s/a", checkPass, "s/b", checkPass, "s/c", checkPass), run("s/a", checkPass, "s/b", checkFail, "s/c", checkPass), false, nil},
		{"recorded loss refused with no-losses", run("s/a", checkPass, "s/b", checkPass, "s/c", checkPass), run("s/a", checkPass, "s/b", checkFail, "s/c", checkPass), true,
			[]string{"check s/b passes directly and is \"fail\""}},
		{"new loss", run("s/a", checkPass, "s/b", checkPass, "s/c", checkPass), run("s/a", checkPass, "s/b", checkFail), false,
			[]string{"check s/c passes directly and is \"absent\""}},
		{"direct regression", run("s/a", checkPass, "s/b", checkPass, "s/c", checkWarn), run("s/a", checkPass, "s/c", checkPass), false,
			[]string{"check s/c passed directly when recorded and is \"warning\" now"}},
		{"recorded loss fixed", run("s/a", checkPass, "s/b", checkPass, "s/c", checkPass), run("s/a", checkPass, "s/b", checkPass, "s/c", checkPass), false,
			[]string{"check s/b, a recorded loss, now passes"}},
		{"a check only toolgate passes is no loss", run("s/a", checkPass, "s/b", checkPass, "s/c", checkPass, "s/d", checkFail),
			run("s/a", checkPass, "s/b", checkFail, "s/c", checkPass, "s/d", checkPass), false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			found := want.check(confAttempt{direct: tc.direct, via: tc.via}, tc.noLosses)
			if len(found) != len(tc.wantMsgs) {
				t.Fatalf("findings = %q, want %d matching %q", found, len(tc.wantMsgs), tc.wantMsgs)
			}
			for i, f := range found {
				if !strings.Contains(f.msg, tc.wantMsgs[i]) || !strings.Contains(f.msg, f.key) {
					t.Errorf("finding %d = %+v, want it to contain %q and its key", i, f, tc.wantMsgs[i])
				}
			}
		})
	}
}

// TestConfWorse: the outcome of an id reported several times does not
// depend on the order of its reports.
func TestConfWorse(t *testing.T) {
	t.Parallel()
	all := []string{checkSkip, checkPass, checkWarn, checkFail}
	for i := range all {
		for j := range all {
			a, b := worse(worse("", all[i]), all[j]), worse(worse("", all[j]), all[i])
			if a != b || (a != all[i] && a != all[j]) {
				t.Errorf("worse(%s, %s) = %s, reversed %s", all[i], all[j], a, b)
			}
		}
	}
	if got := worse(checkPass, checkFail); got != checkFail {
		t.Errorf("a failure does not win over a pass: %s", got)
	}
	if !slices.Equal(lostChecks(confRun{Checks: map[string]string{"x/b": checkPass, "x/a": checkPass}}, confRun{}), []string{"x/a", "x/b"}) {
		t.Error("lostChecks is not sorted or misses checks absent from the second run")
	}
}

// TestConfRecord: what two attempts record — a check is a direct pass, a
// loss or not bridged only if every attempt says so, so an intermittent
// check is recorded as passing.
func TestConfRecord(t *testing.T) {
	t.Parallel()
	run := func(kv ...string) confRun {
		r := confRun{Checks: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			r.Checks[kv[i]] = kv[i+1]
		}
		return r
	}
	both := run("s/a", checkPass, "s/b", checkPass, "s/c", checkPass)
	first := confAttempt{direct: run("s/a", checkPass, "s/b", checkPass, "s/f", checkPass), via: run("s/a", checkFail, "s/b", checkFail), bothEras: both}
	second := confAttempt{direct: run("s/a", checkPass, "s/b", checkPass, "s/f", checkFail), via: run("s/a", checkFail, "s/b", checkPass), bothEras: both}
	got := confCase{suite: confSuite{version: "v"}, downstream: "d"}.record(first, second)
	if !slices.Equal(got.DirectPass, []string{"s/a", "s/b"}) {
		t.Errorf("direct passes %v: s/f passed only once", got.DirectPass)
	}
	if !slices.Equal(got.Lost, []string{"s/a"}) {
		t.Errorf("lost %v: s/b was lost only once", got.Lost)
	}
	if !slices.Equal(got.NotBridged, []string{"s/a", "s/c"}) {
		t.Errorf("not bridged %v", got.NotBridged)
	}
	if one := (confCase{}).record(confAttempt{direct: both, via: both}); one.Lost == nil || len(one.Lost) != 0 || one.NotBridged != nil {
		t.Errorf("no loss is recorded as %v / %v, want [] and nothing", one.Lost, one.NotBridged)
	}
}
