package supervisor

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestArgsRoundTrip(t *testing.T) {
	t.Parallel()
	a := Args{Files: 2, AS: 512 << 20, Grace: 1500 * time.Millisecond, Program: "/usr/bin/jq", Argv: []string{"jq", "--", "-x", ""}}
	enc := a.Encode()
	if enc[0] != Arg0 {
		t.Fatalf("argv[0] %q", enc[0])
	}
	got, err := ParseArgs(enc[1:])
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("ParseArgs(Encode) = %+v, %v; want %+v", got, err, a)
	}
}

func TestParseArgsRefuses(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{}, {"--"}, {"--", "/bin/true"}, {"-files"}, {"-files", "x", "--", "p", "p"},
		{"-files", "-1", "--", "p", "p"}, {"-bogus", "1", "--", "p", "p"},
	} {
		if a, err := ParseArgs(args); err == nil {
			t.Errorf("ParseArgs(%q) = %+v, want an error", args, a)
		}
	}
}

func TestReadReport(t *testing.T) {
	t.Parallel()
	rep, err := ReadReport(strings.NewReader(`{"exit":3,"killed":2,"outside_group":1}` + "\n"))
	if err != nil || rep.Exit != 3 || rep.Killed != 2 || rep.OutsideGroup != 1 {
		t.Errorf("ReadReport = %+v, %v", rep, err)
	}
	for _, in := range []string{"", "{", strings.Repeat(" ", maxReportBytes) + "{}"} {
		if _, err := ReadReport(strings.NewReader(in)); err == nil {
			t.Errorf("ReadReport(%.20q) accepted", in)
		}
	}
}

// TestReportEncode: the hand-written report is what encoding/json writes
// (the limit names are plain words, so they need no escaping).
func TestReportEncode(t *testing.T) {
	t.Parallel()
	for _, r := range []Report{
		{}, {Exit: 3}, {Signal: 9, MaxRSS: 1 << 20}, {Killed: 2, OutsideGroup: 1, CleanupMS: 7, Limit: LimitTraced},
		{Exit: -1, Limit: LimitShim}, {StartError: "fork/exec \"x\": <permission> denied\n"},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.encode(); string(got) != string(want) {
			t.Errorf("encode(%+v) = %s, want %s", r, got, want)
		}
		back, err := ReadReport(strings.NewReader(string(r.encode()) + "\n"))
		if err != nil || !reflect.DeepEqual(*back, r) {
			t.Errorf("ReadReport(encode(%+v)) = %+v, %v", r, back, err)
		}
	}
}
