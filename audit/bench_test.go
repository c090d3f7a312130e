package audit

import (
	"path/filepath"
	"testing"
)

// BenchmarkAppend measures one Append of a typical command event, with and
// without fsync; the fsync figure is the floor on audited calls per second
// per log under gateway.audit.fsync: always.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name  string
		fsync bool
	}{{"fsync=never", false}, {"fsync=always", true}} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), Options{Fsync: bc.fsync})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			exit, dur, out, trunc := 0, int64(4), int64(120), false
			args := ArgsDigest(map[string]any{"filter": ".items[] | .name", "input": "{}"})
			b.ReportAllocs()
			for b.Loop() {
				ev := &Event{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow",
					Reason: "granted by pack:json-tools", Tier: "cautious",
					Payload:    Payload{Provider: "command", Container: "json-tools", Member: "query", Effects: "read"},
					ArgsSHA256: args, Argv: []string{"jq", "-r", ".items[] | .name"},
					Exit: &exit, DurationMS: &dur, OutputBytes: &out, Truncated: &trunc}
				if err := l.Append(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerify measures checking a 10,000-event log.
func BenchmarkVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for range 10000 {
		if err := l.Append(&Event{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow"}); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	for b.Loop() {
		if rep, err := VerifyFile(path); err != nil || rep.Events != 10000 {
			b.Fatal(rep, err)
		}
	}
}
