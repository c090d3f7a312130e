package state

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
)

// benchSinks are the audit sinks compared: the JSONL file with fsync and
// the PostgreSQL chain (a commit per batch).
func benchSinks(b *testing.B) []struct {
	name string
	open func(b *testing.B) (audit.Sink, func() (int64, int64))
} {
	return []struct {
		name string
		open func(b *testing.B) (audit.Sink, func() (int64, int64))
	}{
		{"embedded", func(b *testing.B) (audit.Sink, func() (int64, int64)) {
			l, err := audit.Open(filepath.Join(b.TempDir(), "audit.jsonl"), audit.Options{Fsync: true})
			if err != nil {
				b.Fatal(err)
			}
			return l, l.Stats
		}},
		{"postgres", func(b *testing.B) (audit.Sink, func() (int64, int64)) {
			p, err := OpenPostgres(context.Background(), needPG(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close() })
			c := p.AuditChain(audit.Options{})
			return c, c.Stats
		}},
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAuditAppend: events per second with durability (fsync: always
// for the file, a committed transaction for PostgreSQL) from 1 and 16
// concurrent writers; group commit is what makes 16 faster than 1. Also
// reported: the mean batch size and this process's CPU per event.
func BenchmarkAuditAppend(b *testing.B) {
	for _, s := range benchSinks(b) {
		for _, writers := range []int{1, 16} {
			b.Run(s.name+"/writers="+strconv.Itoa(writers), func(b *testing.B) {
				sink, stats := s.open(b)
				defer sink.Close()
				var next atomic.Int64
				var wg sync.WaitGroup
				cpu0 := cpuTime()
				b.ResetTimer()
				for range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							ev := &audit.Event{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow", Reason: "granted by pack:json-tools",
								Tier: "cautious", Payload: audit.Payload{Provider: "command", Container: "json-tools", Member: "query", Effects: "read"},
								ArgsSHA256: audit.ArgsDigest(nil)}
							if err := sink.Append(ev); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				batches, events := stats()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(events)/float64(max(batches, 1)), "events/batch")
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/event")
			})
		}
	}
}

// BenchmarkApprovalWake: a call waits on replica A; replica B approves; the
// metric is the time from B's approval returning to A's Wait returning
// Granted (p50 and the mean), through NOTIFY on PostgreSQL and
// data_version polling on the embedded store.
func BenchmarkApprovalWake(b *testing.B) {
	for _, name := range []string{"embedded", "postgres"} {
		b.Run(name, func(b *testing.B) {
			var sa, sb Store
			var err error
			if name == "embedded" {
				dir := filepath.Join(b.TempDir(), ".toolgate")
				if sa, err = OpenEmbedded(context.Background(), dir); err == nil {
					sb, err = OpenEmbedded(context.Background(), dir)
				}
			} else {
				dsn := needPG(b)
				if sa, err = OpenPostgres(context.Background(), dsn); err == nil {
					sb, err = OpenPostgres(context.Background(), dsn)
				}
			}
			if err != nil {
				b.Fatal(err)
			}
			defer sa.Close()
			defer sb.Close()
			ba := approvals.New(approvals.Options{Store: sa, TTL: time.Minute, Recheck: time.Minute})
			bb := approvals.New(approvals.Options{Store: sb, TTL: time.Minute, Recheck: time.Minute})
			defer ba.Close()
			defer bb.Close()
			var lat []time.Duration
			b.ResetTimer()
			for i := range b.N {
				key := testKey
				key.ArgsSHA256 = strconv.Itoa(i)
				opened := make(chan approvals.Request, 1)
				done := make(chan approvals.Result, 1)
				go func() {
					done <- ba.Wait(context.Background(), key, testInfo, approvals.WaitOptions{Wait: time.Minute,
						Opened: func(r approvals.Request) { opened <- r }})
				}()
				r := <-opened
				time.Sleep(2 * time.Millisecond) // let A settle into waiting, so the wake-up is what is measured
				if _, err := bb.ApproveContext(context.Background(), r.ID, approvals.ByOperator); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				if res := <-done; res.Outcome != approvals.Granted {
					b.Fatalf("%+v", res)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			var sum time.Duration
			for _, l := range lat {
				sum += l
			}
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-wake-µs")
			b.ReportMetric(float64(sum.Microseconds())/float64(len(lat)), "mean-wake-µs")
		})
	}
}

// BenchmarkEmbeddedWatchCost: what the data_version poll costs while a call
// waits on the embedded store: this process's CPU per second of waiting.
func BenchmarkEmbeddedWatchCost(b *testing.B) {
	s, err := OpenEmbedded(context.Background(), filepath.Join(b.TempDir(), ".toolgate"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	_, stop := s.WatchApprovals()
	defer stop()
	cpu0, t0 := cpuTime(), time.Now()
	for b.Loop() {
		time.Sleep(10 * time.Millisecond) // idle waiting is what is measured
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/time.Since(t0).Seconds()/1000, "cpu-ms/s")
}
