package jsonrpc

import "testing"

// TestFields: one member changes while the others keep their bytes and
// order; strict parsing refuses what ParseMessage refuses.
func TestFields(t *testing.T) {
	t.Parallel()
	f, err := ParseFields([]byte(`{"a": 1, "b":{"x" : [ 2 ]},"c":"3"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Get("b")) != `{"x" : [ 2 ]}` || f.Get("z") != nil {
		t.Errorf("Get: %s", f.Get("b"))
	}
	f = f.Set("d", []byte(`true`)).Delete("a").Delete("nope")
	if got := string(f.Encode()); got != `{"b":{"x" : [ 2 ]},"c":"3","d":true}` {
		t.Errorf("Encode = %s", got)
	}
	if got := string(Fields(nil).Encode()); got != `{}` {
		t.Errorf("empty = %s", got)
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1,"A":2}`, `[1]`, `{"a":`} {
		if _, err := ParseFields([]byte(bad)); err == nil {
			t.Errorf("ParseFields(%s) accepted", bad)
		}
	}
}

func TestField(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, key, want string }{
		{`{"a":{"b":1}}`, "a", `{"b":1}`},
		{`{"a":1}`, "b", ""},
		{`[1,2]`, "a", ""},
		{``, "a", ""},
		{`{"a":1,"a":2}`, "a", ""},
	}
	for _, c := range cases {
		if got := string(Field([]byte(c.in), c.key)); got != c.want {
			t.Errorf("Field(%s, %s) = %q, want %q", c.in, c.key, got, c.want)
		}
	}
}
