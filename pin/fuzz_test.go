package pin

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzCanonical: canonicalisation never panics, its output is valid JSON,
// and canonicalising the canonical form changes nothing. FuzzParse: the
// lock parser never panics and what it accepts round-trips.
func FuzzCanonical(f *testing.F) {
	raw, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		f.Fatal(err)
	}
	var list struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(raw, &list); err != nil {
		f.Fatal(err)
	}
	for _, t := range list.Tools {
		f.Add([]byte(t))
	}
	f.Add([]byte(`{"name":"t","description":"\u0000\ud800"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		canon, _, err := CanonicalDefinition(b)
		if err != nil {
			return
		}
		if !json.Valid(canon) {
			t.Fatalf("canonical form is not JSON: %q", canon)
		}
		again, _, err := CanonicalDefinition(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("not idempotent: %q -> %q (%v)", canon, again, err)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add(sampleLock(f).Marshal())
	f.Add([]byte(`{"version":2,"surfaces":{"s":{"t":{"digest":"sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}}}`))
	f.Add([]byte(`{"version":1,"surfaces":{"s":{"t":5}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Parse("f.lock", b)
		if err != nil {
			return
		}
		back, err := Parse("f.lock", l.Marshal())
		if err != nil || !bytes.Equal(back.Marshal(), l.Marshal()) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
