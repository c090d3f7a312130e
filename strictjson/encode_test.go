package strictjson

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestCanonicalMatchesEncodingJSON: for what Parse returns, the canonical
// encoding is byte for byte what json.Marshal writes for the same document
// decoded by encoding/json with UseNumber.
func TestCanonicalMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{"b":1,"a":[true,null,"x<y>&z"],"c":{"z":1.50,"y":-0,"x":1e400}}`,
		`{"n":9007199254740993,"s":"\u2028\u2029\u0001\t\"\\","e":"é😀"}`,
		`["", {}, [], 0, -1.5E-7]`,
		`"\u00ff\ud83d\ude00"`,
		`{"ключ":"значение","a":{"b":{"c":[1,[2,[3]]]}}}`,
	}
	for _, d := range docs {
		v, err := Parse([]byte(d))
		if err != nil {
			t.Fatalf("Parse(%s): %v", d, err)
		}
		got, ok := Canonical(v)
		if !ok {
			t.Fatalf("Canonical(%s) not ok", d)
		}
		want := marshalUseNumber(t, []byte(d))
		if !bytes.Equal(got, want) {
			t.Errorf("canonical of %s\n got %s\nwant %s", d, got, want)
		}
	}
}

func marshalUseNumber(t testing.TB, d []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(d))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json refused %q: %v", d, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	return b
}

func TestCanonicalGoValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    any
		want string
		ok   bool
	}{
		{3.0, "3", true},
		{1e21, "1e+21", true},
		{1e-7, "1e-7", true},
		{0.1, "0.1", true},
		{math.NaN(), "null", false},
		{math.Inf(1), "null", false},
		{int(7), "7", true},
		{int64(-8), "-8", true},
		{json.Number(""), "0", true},
		{struct{}{}, "null", false},
		{"\xff", `"\ufffd"`, true},
	}
	for _, c := range cases {
		got, ok := Canonical(c.v)
		if string(got) != c.want || ok != c.ok {
			t.Errorf("Canonical(%#v) = %s, %v; want %s, %v", c.v, got, ok, c.want, c.ok)
		}
		if c.ok {
			if _, isStruct := c.v.(struct{}); !isStruct {
				if j, err := json.Marshal(c.v); err == nil && string(j) != c.want && c.v != json.Number("") {
					t.Errorf("Canonical(%#v) = %s, json.Marshal = %s", c.v, got, j)
				}
			}
		}
	}
}

func BenchmarkParseCanonical(b *testing.B) {
	doc := []byte(`{"name":"store","arguments":{"entity_type":"note","text":"hello <world>","n":42,"tags":["a","b"],"nested":{"k":1.5}},"_meta":{"progressToken":7}}`)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		v, err := Parse(doc)
		if err != nil {
			b.Fatal(err)
		}
		buf, _ = AppendCanonical(buf[:0], v)
	}
}

func BenchmarkEncodingJSONRoundTrip(b *testing.B) {
	doc := []byte(`{"name":"store","arguments":{"entity_type":"note","text":"hello <world>","n":42,"tags":["a","b"],"nested":{"k":1.5}},"_meta":{"progressToken":7}}`)
	b.ReportAllocs()
	for b.Loop() {
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompactMatchesEncoderWithoutHTMLEscaping: AppendCompact writes what
// an encoding/json Encoder with SetEscapeHTML(false) writes for the same
// document, and leaves <, > and & as they are at every depth (keys too).
func TestCompactMatchesEncoderWithoutHTMLEscaping(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{"b":1,"a":[true,null,"x<y>&z"],"c":{"z":1.50,"<k>&":"\u003c\u0026"}}`,
		`{"n":9007199254740993,"s":"\u2028\u2029\u0001\t\"\\","e":"é😀"}`,
		`["", {}, [], 0, -1.5E-7, "</script>"]`,
	}
	for _, d := range docs {
		v, err := Parse([]byte(d))
		if err != nil {
			t.Fatalf("Parse(%s): %v", d, err)
		}
		got, ok := AppendCompact(nil, v)
		if !ok {
			t.Fatalf("AppendCompact(%s) not ok", d)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(d)))
		dec.UseNumber()
		var w any
		if err := dec.Decode(&w); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(w); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Errorf("compact of %s\n got %s\nwant %s", d, got, want.Bytes())
		}
		if bytes.Contains(got, []byte(`\u003c`)) || bytes.Contains(got, []byte(`\u0026`)) {
			t.Errorf("compact of %s escapes HTML: %s", d, got)
		}
	}
}
