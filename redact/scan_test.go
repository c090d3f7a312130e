package redact

import (
	"reflect"
	"testing"
)

// TestScanDoc: what the scan reads of a document — its strings in order,
// the text items joined per array — and what it refuses as not JSON.
func TestScanDoc(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, doc string
		ok        bool
		strings   []string // bodies of the string tokens, in order
		joins     [][]int
		numbers   bool
	}{
		{"blocks", `{"content":[{"type":"text","text":"a"},{"text":"b","type":"text"}]}`, true,
			[]string{"content", "type", "text", "text", "a", "text", "b", "type", "text"}, [][]int{{4, 6}}, false},
		{"strings and numbers", ` [ "x" , 1.5e3 , "y\"z" , true , null ] `, true,
			[]string{"x", `y\"z`}, [][]int{{0, 1}}, true},
		{"one item, no join", `[{"text":"a"},{"text":2}]`, true, []string{"text", "a", "text"}, nil, true},
		{"escaped text key", `[{"t\u0065xt":"a"},"b"]`, true, []string{`t\u0065xt`, "a", "b"}, [][]int{{1, 2}}, false},
		{"nested arrays join apart", `[["a","b"],"c",{"text":"d"}]`, true, []string{"a", "b", "c", "text", "d"}, [][]int{{0, 1}, {2, 4}}, false},
		{"a text that is an object is no item", `[{"text":{"text":"a"}},"b"]`, true, []string{"text", "text", "a", "b"}, nil, false},
		{"empty containers", `{"a":[],"b":{}}`, true, []string{"a", "b"}, nil, false},
		{"trailing bytes", `{"a":1} x`, false, nil, nil, false},
		{"unterminated string", `{"a":"b`, false, nil, nil, false},
		{"missing colon", `{"a" 1}`, false, nil, nil, false},
		{"mismatched close", `[1}`, false, nil, nil, false},
		{"bare word", `[nope]`, false, nil, nil, false},
		{"empty", ``, false, nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ok := scanDoc([]byte(c.doc))
			if ok != c.ok {
				t.Fatalf("scanDoc(%s) ok = %v", c.doc, ok)
			}
			if !ok {
				return
			}
			var got []string
			for _, tok := range d.toks {
				got = append(got, c.doc[tok.start:tok.end])
			}
			if !reflect.DeepEqual(got, c.strings) || !reflect.DeepEqual(d.joins, c.joins) || d.numbers != c.numbers {
				t.Errorf("scanDoc(%s)\n strings %q joins %v numbers %v\n want    %q joins %v numbers %v", c.doc, got, d.joins, d.numbers, c.strings, c.joins, c.numbers)
			}
		})
	}
}
