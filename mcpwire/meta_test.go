package mcpwire

import (
	"encoding/json"
	"testing"
)

func TestSetResultMembers(t *testing.T) {
	t.Parallel()
	got := string(SetResultMembers(json.RawMessage(`{"tools":[ 1 ],"resultType":"x"}`), "resultType", `"complete"`, "cacheScope", `"private"`))
	if want := `{"tools":[ 1 ],"resultType":"complete","cacheScope":"private"}`; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	if got := string(SetResultMembers(json.RawMessage(`[1]`), "a", "1")); got != `[1]` {
		t.Errorf("non-object changed: %s", got)
	}
}

// TestMetaVersion: the version a request's _meta declares, and nothing
// for a missing _meta, a missing key or a version that is not a string.
func TestMetaVersion(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"x"}`: "2026-07-28",
		`{"name":"x"}`: "",
		`{"_meta":{}}`: "",
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}`: "",
		`not json`: "",
		``:         "",
	}
	for params, want := range cases {
		if got := MetaVersion(json.RawMessage(params)); got != want {
			t.Errorf("MetaVersion(%s) = %q, want %q", params, got, want)
		}
	}
}
