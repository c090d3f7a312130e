package scriptedmodel

import "testing"

func TestCallIDs(t *testing.T) {
	t.Parallel()
	if id := CallID("call", 3, 1); id != "call_03_01" {
		t.Errorf("CallID = %q", id)
	}
	for _, tc := range []struct {
		ids  []string
		want int
	}{
		{nil, 0},
		{[]string{"call_00_00"}, 1},
		{[]string{"call_00_00", "call_03_01", "call_01_00"}, 4},
		{[]string{"toolu_05_00", "call_x", "call_02_00junk", "fc_call_09_00"}, 0},
	} {
		if got := Next("call", tc.ids); got != tc.want {
			t.Errorf("Next(%v) = %d, want %d", tc.ids, got, tc.want)
		}
	}
}

func TestRecorderKeepsEachResultOnce(t *testing.T) {
	t.Parallel()
	var r Recorder
	r.Result(ToolResult{ToolUseID: "a", Text: "1"})
	r.Result(ToolResult{ToolUseID: "a", Text: "resent"})
	r.Result(ToolResult{ToolUseID: "b", Text: "2"})
	if got := r.Results(); len(got) != 2 || got[0].Text != "1" || got[1].ToolUseID != "b" {
		t.Errorf("results = %+v", got)
	}
}
