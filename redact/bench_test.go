package redact

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/strictjson"
)

// typicalResult is a typical tool result: 4 KiB of text with line breaks
// (escaped in the JSON) in one text block, no credential in it.
func typicalResult() []byte {
	text := strings.Repeat("a line of ordinary tool output, nothing secret\n", 88)
	doc := []byte(`{"content":[{"type":"text","text":`)
	doc = strictjson.AppendString(doc, text)
	return append(doc, `}],"isError":false}`...)
}

// cpuTime is the CPU time the process used so far: on a shared machine
// wall time per op mostly measures the other processes, CPU time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkJSON is the cost redaction adds to every result: a typical
// 4 KiB result with no credential configured, with two ordinary tokens,
// and with a token holding the characters JSON escapes (a quote among
// them: its forms could cross strings, so the whole document is also
// searched as written). It reports CPU ns/op beside wall ns/op.
func BenchmarkJSON(b *testing.B) {
	doc := typicalResult()
	for _, c := range []struct {
		name  string
		creds map[string]string
	}{
		{"4KiB/none", nil},
		{"4KiB/tokens", map[string]string{"a": redactSecret, "b": "another-credential-value-42"}},
		{"4KiB/credentials", map[string]string{"a": redactSecret, "b": trickySecret}},
	} {
		r := New(c.creds)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			t0 := cpuTime()
			for b.Loop() {
				if _, ok := r.JSON(doc); !ok {
					b.Fatal("refused")
				}
			}
			b.ReportMetric(float64(cpuTime()-t0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkRedact is plain text: command output of ~460 KB.
func BenchmarkRedact(b *testing.B) {
	rd := New(map[string]string{"a": redactSecret, "b": "another-credential-value-42"})
	text := strings.Repeat("some ordinary output line, with numbers 1, 2, 3 and words\n", 8000)
	b.SetBytes(int64(len(text)))
	t0 := cpuTime()
	for b.Loop() {
		rd.Redact(text)
	}
	b.ReportMetric(float64(cpuTime()-t0)/float64(b.N), "cpu-ns/op")
}
