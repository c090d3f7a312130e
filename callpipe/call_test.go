package callpipe

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseCallRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, params, want string }{
		{"no params", ``, "has no params"},
		{"not an object", `[1]`, "params must be an object, not an array"},
		{"invalid json", `{"name":`, "params:"},
		{"second name in other case", `{"name":"read_entity","Name":"delete_entity","arguments":{}}`, `differ only in case`},
		{"only Name", `{"Name":"delete_entity","arguments":{}}`, `params member "Name" differs only in case from "name"`},
		{"Arguments beside arguments", `{"name":"x","arguments":{"entity_type":"note"},"Arguments":{"entity_type":"secret"}}`, "differ only in case"},
		{"only Arguments", `{"name":"x","ARGUMENTS":{"a":1}}`, `"ARGUMENTS" differs only in case from "arguments"`},
		{"duplicate name", `{"name":"a","name":"b"}`, `duplicate key "name"`},
		{"duplicate argument", `{"name":"a","arguments":{"n":1,"n":2}}`, `duplicate key "n" at /arguments`},
		{"case variant argument", `{"name":"a","arguments":{"entity_type":"note","Entity_Type":"secret"}}`, "differ only in case"},
		{"nested duplicate", `{"name":"a","arguments":{"x":{"y":[{"z":1,"z":2}]}}}`, `duplicate key "z" at /arguments/x/y/0`},
		{"name missing", `{"arguments":{}}`, "params.name is missing"},
		{"name not a string", `{"name":7}`, "params.name must be a string, not a number"},
		{"name empty", `{"name":""}`, "params.name is empty"},
		{"arguments a string", `{"name":"a","arguments":"{}"}`, "params.arguments must be an object, not a string"},
		{"arguments an array", `{"name":"a","arguments":[]}`, "not an array"},
		{"meta not an object", `{"name":"a","_meta":1}`, "params._meta must be an object"},
		{"task not an object", `{"name":"a","task":true}`, "params.task must be an object"},
		{"requestState not a string", `{"name":"a","requestState":{}}`, "params.requestState must be a string"},
		{"inputResponses not an object", `{"name":"a","inputResponses":[]}`, "params.inputResponses must be an object"},
		{"lone surrogate", `{"name":"a","arguments":{"s":"\ud800"}}`, "unpaired surrogate"},
		{"invalid utf8", "{\"name\":\"a\",\"arguments\":{\"s\":\"\xc3\"}}", "not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseCall([]byte(c.params))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseCall(%s) = %v, want %q", c.params, err, c.want)
			}
			if _, ok := err.(*CallError); !ok {
				t.Fatalf("error %T, want *CallError", err)
			}
		})
	}
}

func TestParseCallCanonical(t *testing.T) {
	t.Parallel()
	c, err := ParseCall([]byte(`{"unknown":1,"arguments":{"n":9007199254740993,"b":"x<y","a":[1.50,true]},"name":"store","_meta":{"progressToken":"p1","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"requestState":"opaque==","inputResponses":{"q":{"action":"accept"}},"task":{"ttl":60000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "store" || c.Args["n"] != json.Number("9007199254740993") {
		t.Fatalf("call %+v", c)
	}
	want := `{"_meta":{"progressToken":"p1","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"arguments":{"a":[1.50,true],"b":"x\u003cy","n":9007199254740993},"inputResponses":{"q":{"action":"accept"}},"name":"store","requestState":"opaque==","task":{"ttl":60000}}`
	if got := string(c.Params()); got != want {
		t.Fatalf("params\n got %s\nwant %s", got, want)
	}
	if !json.Valid(c.Params()) {
		t.Fatal("params are not valid JSON")
	}
	if c.ProgressToken() != "p1" || c.MetaString("traceparent") == "" || c.MetaString("nope") != "" {
		t.Fatalf("meta accessors: %v %q", c.ProgressToken(), c.MetaString("traceparent"))
	}
	// The unknown member is neither decided on nor forwarded.
	if strings.Contains(string(c.Params()), "unknown") {
		t.Fatal("an unknown member was forwarded")
	}
	bare, err := ParseCall([]byte(`{"name":"ping","arguments":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(bare.Params()); got != `{"arguments":{},"name":"ping"}` {
		t.Fatalf("bare params %s", got)
	}
	if bare.ProgressToken() != nil {
		t.Fatal("no _meta, no progress token")
	}
	var nilCall *Call
	if nilCall.ProgressToken() != nil {
		t.Fatal("nil call")
	}
}

// TestDigestBindsLiteralArguments: the digest an approval binds to
// follows the arguments' exact values — numbers by their text — and not
// their order or spacing.
func TestDigestBindsLiteralArguments(t *testing.T) {
	t.Parallel()
	digest := func(p string) string {
		c, err := ParseCall([]byte(p))
		if err != nil {
			t.Fatal(err)
		}
		return c.Digest
	}
	a := digest(`{"name":"t","arguments":{"n":9007199254740992,"s":"x"}}`)
	if b := digest(`{"arguments":{ "s" : "x", "n" : 9007199254740992 },"name":"t"}`); a != b {
		t.Error("order and spacing changed the digest")
	}
	if b := digest(`{"name":"t","arguments":{"n":9007199254740993,"s":"x"}}`); a == b {
		t.Error("9007199254740992 and 9007199254740993 digest the same: float rounding reached the digest")
	}
	if b := digest(`{"name":"t","arguments":{"n":9007199254740992.0,"s":"x"}}`); a == b {
		t.Error("a different literal digests the same")
	}
	if len(a) != 64 {
		t.Errorf("digest %q", a)
	}
}
