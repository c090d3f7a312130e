package callpipe

import (
	"encoding/json"
	"testing"
)

func TestResultBuilders(t *testing.T) {
	t.Parallel()
	for _, b := range [][]byte{ErrorResult("DENIED: \"quoted\"\n"), TextResult("ok \u2028")} {
		if !json.Valid(b) {
			t.Errorf("invalid JSON %s", b)
		}
	}
	if string(ErrorResult("x")) != `{"content":[{"type":"text","text":"x"}],"isError":true}` || string(TextResult("y")) != `{"content":[{"type":"text","text":"y"}]}` {
		t.Error("result shapes")
	}
}
