package strictjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDifferential checks strictjson against encoding/json on arbitrary
// input: whatever strictjson accepts, encoding/json accepts too and reads
// the same document (its canonical re-encoding is identical), and
// re-parsing the canonical form gives it back unchanged.
func FuzzDifferential(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","arguments":{"x":1}}`, `{"a":1,"a":2}`, `{"a":1,"A":2}`, `[1,2.50,-0e-0]`,
		`"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `{"n":9007199254740993}`, `{"k":1,"\u212a":2}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if verr := Valid(data); (verr == nil) != (err == nil) {
			t.Fatalf("Valid and Parse disagree on %q: %v vs %v", data, verr, err)
		}
		if err != nil {
			return
		}
		canon, ok := Canonical(v)
		if !ok {
			t.Fatalf("Canonical failed for parsed %q", data)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var gv any
		if err := dec.Decode(&gv); err != nil {
			t.Fatalf("strictjson accepted %q, encoding/json refused: %v", data, err)
		}
		want, err := json.Marshal(gv)
		if err != nil {
			t.Fatalf("json.Marshal: %v", err)
		}
		if !bytes.Equal(canon, want) {
			t.Fatalf("documents read differently: %q\nstrict %s\n   go  %s", data, canon, want)
		}
		v2, err := Parse(canon)
		if err != nil {
			t.Fatalf("canonical form %s does not re-parse: %v", canon, err)
		}
		canon2, _ := Canonical(v2)
		if !bytes.Equal(canon, canon2) {
			t.Fatalf("canonical form not stable: %s vs %s", canon, canon2)
		}
		if len(data) > 0 && bytes.TrimSpace(data)[0] == '{' {
			if _, err := Members(data); err != nil {
				t.Fatalf("Members refused what Parse accepted: %v", err)
			}
		}
	})
}
