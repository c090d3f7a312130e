package e2e

import (
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkQueryPaired compares, pair by pair in one run, the json-tools
// query through toolgate (MCP over HTTP to the built daemon: decide, run,
// audit with fsync) with running the same jq command directly. It reports
// the median of the per-pair ratios, which cancels most of the noise of a
// small shared machine.
//
//	go test -run '^$' -bench BenchmarkQueryPaired -benchtime 200x ./e2e/
func BenchmarkQueryPaired(b *testing.B) {
	dir := b.TempDir()
	writeFile(b, dir, "toolgate.yaml", "version: 1\ncommand_packs:\n  - use: bundled/json-tools\nagents:\n  - id: reader\n    token: {env: READER_TOKEN}\n    grants: [pack:json-tools]\n")
	writeFile(b, dir, "data.json", `{"items":[{"name":"a"},{"name":"b"}]}`)
	d := startDaemon(b, []string{"READER_TOKEN=bench-token-0123456789abcdef"}, "-w", filepath.Join(dir, "toolgate.yaml"))
	cl := mcpHTTP(b, d.base+"/mcp/json-tools", "bench-token-0123456789abcdef")
	args := map[string]any{"filter": ".items[].name", "file": "data.json"}
	direct := func() {
		cmd := exec.Command("jq", ".items[].name", "data.json")
		cmd.Dir = dir
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("direct jq: %v", err)
		}
	}
	through := func() {
		if _, isErr, _, err := call(b, cl, "query", args); err != nil || isErr {
			b.Fatalf("query through toolgate: %v", err)
		}
	}
	direct()
	through()
	ratios := make([]float64, 0, b.N)
	var sumDirect, sumThrough time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		through()
		t2 := time.Now()
		sumDirect += t1.Sub(t0)
		sumThrough += t2.Sub(t1)
		ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(float64(sumDirect.Microseconds())/float64(b.N), "direct-µs/op")
	b.ReportMetric(float64(sumThrough.Microseconds())/float64(b.N), "toolgate-µs/op")
}
