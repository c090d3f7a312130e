package audit

import (
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkAppendConcurrent measures events per second with fsync from 1
// and 16 goroutines sharing one Log: group commit lets the 16 share one
// write and one fsync per batch, so their rate is a multiple of the 1's.
func BenchmarkAppendConcurrent(b *testing.B) {
	for _, writers := range []int{1, 16} {
		b.Run("fsync=always/writers="+strconv.Itoa(writers), func(b *testing.B) {
			l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), Options{Fsync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			benchAppends(b, l, writers)
			batches, events := l.Stats()
			b.ReportMetric(float64(events)/float64(max(batches, 1)), "events/batch")
		})
	}
}

// benchAppends runs b.N appends of a typical event from writers goroutines
// on sink and reports events/s.
func benchAppends(b *testing.B, sink Sink, writers int) {
	b.Helper()
	exit, dur, out, trunc := 0, int64(4), int64(120), false
	args := ArgsDigest(map[string]any{"filter": ".items[] | .name", "input": "{}"})
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				ev := &Event{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow",
					Reason: "granted by pack:json-tools", Tier: "cautious",
					Payload:    Payload{Provider: "command", Container: "json-tools", Member: "query", Effects: "read"},
					ArgsSHA256: args, Argv: []string{"jq", "-r", ".items[] | .name"},
					Exit: &exit, DurationMS: &dur, OutputBytes: &out, Truncated: &trunc}
				if err := sink.Append(ev); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
