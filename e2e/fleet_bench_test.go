package e2e

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// Fleet benchmarks, through the gateway and the built binary. Run them on
// their own, with a fixed count so every configuration does the same work:
//
//	go test ./e2e -run '^$' -bench 'BenchmarkFleetAudit' -benchtime 4000x
//	go test ./e2e -run '^$' -bench 'BenchmarkFleetApprovalWakeup' -benchtime 100x
//
// BenchmarkFleetAudit: audit appends per second with fsync: always, 1
// process vs 4 processes sharing one store, embedded (one JSONL file,
// flock + group commit) vs PostgreSQL (one chain, a transaction per
// group commit). 16 clients in all, each making open read calls (two
// events per call: the write-ahead decision and the outcome). Reported:
// events/s (wall), the gateway processes' CPU per event (getrusage of the
// processes via /proc, steadier than wall time on a shared machine) and
// events per commit (the group commit's batch).
func BenchmarkFleetAudit(b *testing.B) {
	for _, store := range []string{"embedded", "postgres"} {
		for _, procs := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/%dproc", store, procs), func(b *testing.B) {
				o := fleetOptions{}
				if store == "postgres" {
					o.dsn = fleetDSN(b)
				}
				benchAudit(b, newFleet(b, o), procs, 16)
			})
		}
	}
}

func benchAudit(b *testing.B, f *fleet, procs, clients int) {
	var ds []*daemon
	for i := range procs {
		ds = append(ds, f.daemon(b, "--agent", fmt.Sprintf("a%d", i+1)))
	}
	cls := make([]*client.Client, clients)
	for i := range cls {
		cls[i] = mcpHTTP(b, ds[i%procs].base+"/mcp/echo", fmt.Sprintf("tok-a%d-0123456789abcdef", i%procs+1))
	}
	// Warm up every client and process (sessions, the store's connections).
	for i, cl := range cls {
		if _, isErr, _, err := call(b, cl, "say", map[string]any{"n": fmt.Sprint("warm-", i)}); err != nil || isErr {
			b.Fatalf("warm-up call: %v", err)
		}
	}
	cpu0 := cpuOf(b, ds)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var next sync.Mutex
	n := 0
	errs := make(chan error, clients)
	for _, cl := range cls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				i := n
				n++
				next.Unlock()
				if i >= b.N {
					return
				}
				if _, isErr, _, err := call(b, cl, "say", map[string]any{"n": fmt.Sprint(i)}); err != nil || isErr {
					errs <- fmt.Errorf("call %d: isError %v err %v", i, isErr, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	events := 2 * float64(b.N)
	cpu := cpuOf(b, ds) - cpu0
	var appended, batches int64
	for _, d := range ds {
		var st struct {
			Audit struct {
				Appended int64 `json:"appended"`
				Batches  int64 `json:"batches"`
			} `json:"audit"`
		}
		if adminJSON(b, d, "GET", "/admin/status", &st) != http.StatusOK {
			b.Fatal("status")
		}
		appended += st.Audit.Appended
		batches += st.Audit.Batches
	}
	b.ReportMetric(events/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/events, "cpu-µs/event")
	if batches > 0 {
		b.ReportMetric(float64(appended)/float64(batches), "events/commit")
	}
	b.ReportMetric(0, "ns/op")
}

// cpuOf sums the user and system CPU time the processes have used.
func cpuOf(b *testing.B, ds []*daemon) time.Duration {
	var total time.Duration
	for _, d := range ds {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.cmd.Process.Pid))
		if err != nil {
			b.Fatal(err)
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		var utime, stime int64
		fmt.Sscan(fields[11], &utime) // field 14 of stat, counted after the command
		fmt.Sscan(fields[12], &stime)
		total += time.Duration(utime+stime) * time.Second / 100 // USER_HZ
	}
	return total
}

// BenchmarkFleetApprovalWakeup: a strict call held on replica A is
// approved through replica B's admin API; reported is the time from B's
// answer to the call's result on A (median and 90th percentile), beside
// the same call already approved (the run and its audit, no waiting), so
// the difference is the wake-up across processes: PostgreSQL
// LISTEN/NOTIFY between replicas, or the embedded store's inotify watch.
func BenchmarkFleetApprovalWakeup(b *testing.B) {
	for _, store := range []string{"embedded", "postgres"} {
		b.Run(store, func(b *testing.B) {
			o := fleetOptions{wait: "60s"}
			if store == "postgres" {
				o.dsn = fleetDSN(b)
			}
			f := newFleet(b, o)
			a, rb := f.daemon(b), f.daemon(b)
			vault := mcpHTTP(b, a.base+"/mcp/vault", "tok-a1-0123456789abcdef")
			side := mcpHTTP(b, a.base+"/mcp/side", "tok-a1-0123456789abcdef")
			var wake, direct []time.Duration
			b.ResetTimer()
			for i := range b.N {
				done := make(chan error, 1)
				go func() {
					text, isErr, _, err := call(b, vault, "stash", map[string]any{"item": fmt.Sprint("w-", i)})
					if err == nil && isErr {
						err = fmt.Errorf("held call refused: %s", text)
					}
					done <- err
				}()
				p := pendingOn(b, rb, "a1")
				if code := adminJSON(b, rb, "POST", "/admin/approvals/"+p.ID+"/approve", nil); code != http.StatusOK {
					b.Fatalf("approve: %d", code)
				}
				t0 := time.Now()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				wake = append(wake, time.Since(t0))
				// The same command run without waiting (side:append, open).
				t0 = time.Now()
				if _, isErr, _, err := call(b, side, "append", map[string]any{"n": fmt.Sprint("d-", i)}); err != nil || isErr {
					b.Fatalf("direct call: %v", err)
				}
				direct = append(direct, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(wake)
			slices.Sort(direct)
			b.ReportMetric(ms(wake[len(wake)/2]), "wake-p50-ms")
			b.ReportMetric(ms(wake[len(wake)*9/10]), "wake-p90-ms")
			b.ReportMetric(ms(direct[len(direct)/2]), "direct-p50-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
