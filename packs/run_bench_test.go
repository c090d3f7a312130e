//go:build linux

package packs

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
)

// BenchmarkPackCall runs real programs (jq on a small JSON file, cat of a
// small file) as a bare exec and as a contained pack call, interleaved
// call by call in one run, in each containment mode, and reports the
// median wall time and the CPU per call of each (this process and every
// child it reaped: for a pack call the gateway's side, the helper and the
// command) and their ratios:
//
//	go test -run '^$' -bench BenchmarkPackCall -benchtime 200x ./packs
func BenchmarkPackCall(b *testing.B) {
	sample, err := filepath.Abs("testdata/sample.json")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		argv []string
	}{
		{"jq", []string{"jq", "-c", ".", sample}},
		{"cat", []string{"cat", sample}},
	}
	for _, mode := range []contain.Mode{contain.ModeCgroup, contain.ModeSession} {
		m := contain.New(contain.Options{Mode: mode})
		b.Cleanup(func() { m.Close() })
		for _, bc := range cases {
			b.Run(string(mode)+"/"+bc.name, func(b *testing.B) {
				path, err := exec.LookPath(bc.argv[0])
				if err != nil {
					b.Fatalf("%s is needed: %v", bc.argv[0], err)
				}
				r := NewRunner(nil, func(k string) string {
					if k == "PATH" {
						return "/usr/local/bin:/usr/bin:/bin"
					}
					return ""
				})
				r.Contain = m
				pack := packOf(command(bc.name, bc.argv...))
				bare := func() error { return exec.Command(path, bc.argv[1:]...).Run() }
				call := func() error {
					inv, err := r.Prepare(pack, pack.Commands[0], nil)
					if err != nil {
						return err
					}
					res, err := r.Run(context.Background(), inv)
					if err == nil && !res.OK() {
						b.Fatal(res.Err)
					}
					return err
				}
				var bareT, callT []time.Duration
				var bareCPU, callCPU time.Duration
				for b.Loop() {
					for _, side := range []struct {
						run  func() error
						wall *[]time.Duration
						cpu  *time.Duration
					}{{bare, &bareT, &bareCPU}, {call, &callT, &callCPU}} {
						c0, t0 := cpuSoFar(), time.Now()
						if err := side.run(); err != nil {
							b.Fatal(err)
						}
						*side.wall = append(*side.wall, time.Since(t0))
						*side.cpu += cpuSoFar() - c0
					}
				}
				n := float64(len(bareT))
				pb, pc := median(bareT), median(callT)
				b.ReportMetric(float64(pb.Microseconds())/1000, "bare-p50-ms")
				b.ReportMetric(float64(pc.Microseconds())/1000, "call-p50-ms")
				b.ReportMetric(float64(pc)/float64(pb), "p50-ratio")
				b.ReportMetric(float64(bareCPU.Microseconds())/1000/n, "bare-cpu-ms/op")
				b.ReportMetric(float64(callCPU.Microseconds())/1000/n, "call-cpu-ms/op")
				b.ReportMetric(float64(callCPU)/float64(bareCPU), "cpu-ratio")
			})
		}
	}
}

// cpuSoFar is the user+system CPU of this process and of every child it
// has reaped (a helper's includes its command's: it waited for it).
func cpuSoFar() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	ns := self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano()
	return time.Duration(ns)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
