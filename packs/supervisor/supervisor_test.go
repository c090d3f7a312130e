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

// TestReportEncode: the hand-written report is what encoding/json writes
// for ordinary text, and decodes to the same report whatever the text.
func TestReportEncode(t *testing.T) {
	t.Parallel()
	for _, r := range []Report{
		{}, {Exit: 3}, {Signal: 9, MaxRSS: 1 << 20}, {Killed: 2, OutsideGroup: 1, CleanupMS: 7, Limit: LimitTraced},
		{Exit: -1, Limit: LimitShim}, {StartError: "fork/exec \"x\\y\": permission denied\n\t\x01"},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Encode(); string(got) != string(want) {
			t.Errorf("Encode(%+v) = %s, want %s", r, got, want)
		}
		var back Report
		if err := json.Unmarshal(r.Encode(), &back); err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("decoding Encode(%+v) = %+v, %v", r, back, err)
		}
	}
}

// TestReportEncodeHostileText: whatever an error message holds (it may
// quote a program path), the report stays one valid JSON object that
// decodes to that text (invalid UTF-8 as U+FFFD, as encoding/json reads it).
func TestReportEncodeHostileText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`"}` + `,"exit":0,"x":"`, "\x00\x1f\u2028<>&", "bad \xff utf8", "émoji 🎉", `\`, ""} {
		r := Report{Exit: 1, StartError: s}
		var back Report
		if err := json.Unmarshal(r.Encode(), &back); err != nil {
			t.Fatalf("Encode(%q) = %s: %v", s, r.Encode(), err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if back.StartError != want || back.Exit != 1 {
			t.Errorf("Encode(%q) decodes to %+v", s, back)
		}
	}
}
