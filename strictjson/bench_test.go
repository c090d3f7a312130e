package strictjson

import "testing"

// benchMessages are what a relay checks on every proxied call: the
// client's tools/call and the server's answer.
var benchMessages = map[string][]byte{
	"request": []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":3}}}`),
	"result":  []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}],"structuredContent":{"items":[{"n":1,"s":"a\"b"},{"n":2.5,"s":"\u00e9"}]},"isError":false}}`),
}

// BenchmarkMembers compares splitting an envelope (its values checked)
// with the reference parser, in one run.
func BenchmarkMembers(b *testing.B) {
	for name, msg := range benchMessages {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Members(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/reference", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := refMembers(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParse is Parse (building the value) beside the reference.
func BenchmarkParse(b *testing.B) {
	msg := benchMessages["result"]
	b.Run("current", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := refParse(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
