package strictjson

import (
	"reflect"
	"strings"
	"testing"
)

// differentialSeeds are documents on every path of the parser: accepted,
// refused for each reason, nested, escaped keys, many keys, lax inputs.
var differentialSeeds = []string{
	`{"name":"a","arguments":{"x":1}}`, `{"a":1,"a":2}`, `{"a":1,"A":2}`, `[1,2.50,-0e-0]`,
	`"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `{"n":9007199254740993}`, `{"k":1,"\u212a":2}`, `null`,
	`{"a\u0062":1,"ab":2}`, `{"a\u0042":1,"ab":2}`, `{"x":{"y":[{"z":"\x01"}]}}`, `{"a/b":[0,{"c~d":"\x01"}]}`,
	`{"\u00e9":1,"\u00c9":2}`, "{\"\xff\":1}", `{"p":{"a":1,"A":2},"m":"x"}`, `{"p":["\ud800"],"m":"x"}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":3}}}`,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello\n\"q\""}],"isError":false}}`,
	manyKeys(12) + `}`, manyKeys(12) + `,"K3":1}`, manyKeys(40) + `,"k39":0}`, `{"a" 1}`, `{"a":1,}`, `{"a":1.}`,
	`{"a":"\u12"}`, `{"a":"\x"}`, `[1 2]`, `{"a":{"b":{}}} x`, ` {"a" : [ true , false , null ] } `, `{"e\"s\\c":1,"e\"S\\c":2}`,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1),
}

// TestDifferentialWithReference holds the parser to the reference parser
// (refparse_test.go) on the seeds; FuzzDifferentialWithReference does on
// anything.
func TestDifferentialWithReference(t *testing.T) {
	t.Parallel()
	for _, s := range differentialSeeds {
		compareWithReference(t, []byte(s))
	}
}

func FuzzDifferentialWithReference(f *testing.F) {
	for _, s := range differentialSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { compareWithReference(t, data) })
}

// compareWithReference requires every entry point to return what the
// reference returns for data: the same value, or an error with the same
// text (message, path and offset).
func compareWithReference(t *testing.T, data []byte) {
	t.Helper()
	same := func(what string, got, want any, gotErr, wantErr error) {
		t.Helper()
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("%s(%q): error %v, reference %v", what, data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s(%q) = %#v, reference %#v", what, data, got, want)
		}
	}
	v, err := Parse(data)
	rv, rerr := refParse(data)
	same("Parse", v, rv, err, rerr)
	same("Valid", nil, nil, Valid(data), refValid(data))
	m, err := Members(data)
	rm, rerr := refMembers(data)
	same("Members", nonEmpty(m), nonEmpty(rm), err, rerr)
	for _, key := range []string{"a", "params", "k3", "\u212a"} {
		v, found, err := Lookup(data, key)
		var rv []byte
		rfound := false
		for _, mem := range rm {
			if mem.Key == key {
				rv, rfound = mem.Value, true
			}
		}
		same("Lookup", struct {
			v     string
			found bool
		}{string(v), found}, struct {
			v     string
			found bool
		}{string(rv), rfound}, err, rerr)
	}
	m, err = LaxMembers(data)
	rm, rerr = refLaxMembers(data)
	same("LaxMembers", nonEmpty(m), nonEmpty(rm), err, rerr)
	m, err = ScanMembers(data)
	rm, rerr = refScanMembers(data)
	same("ScanMembers", nonEmpty(m), nonEmpty(rm), err, rerr)
}

// nonEmpty makes Members' results comparable whether empty or nil.
func nonEmpty(ms []Member) []Member {
	if len(ms) == 0 {
		return nil
	}
	return ms
}
