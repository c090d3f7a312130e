package redact

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/strictjson"
)

// typicalResult is a typical tool result: 4 KiB of text with line breaks
// (escaped in the JSON) in one text block, no credential in it.
func typicalResult() []byte {
	text := strings.Repeat("a line of ordinary tool output, nothing secret\n", 88)
	doc := []byte(`{"content":[{"type":"text","text":`)
	doc = strictjson.AppendString(doc, text)
	return append(doc, `}]}`...)
}

// BenchmarkJSON is the cost redaction adds to every result: a typical
// 4 KiB result with two credentials configured, and with none.
func BenchmarkJSON(b *testing.B) {
	doc := typicalResult()
	for _, c := range []struct {
		name  string
		creds map[string]string
	}{
		{"4KiB/credentials", map[string]string{"a": redactSecret, "b": trickySecret}},
		{"4KiB/none", nil},
	} {
		r := New(c.creds)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, ok := r.JSON(doc); !ok {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkRedact is plain text: command output of ~460 KB.
func BenchmarkRedact(b *testing.B) {
	rd := New(map[string]string{"a": redactSecret, "b": "another-credential-value-42"})
	text := strings.Repeat("some ordinary output line, with numbers 1, 2, 3 and words\n", 8000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		rd.Redact(text)
	}
}
