package pin

import (
	"fmt"
	"testing"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	l := New()
	l.SetSurface("srv", []Tool{{"keep", d('a'), nil}, {"edit", d('b'), nil}, {"drop", d('c'), nil}})
	live := []Tool{{"keep", d('a'), nil}, {"edit", d('f'), nil}, {"fresh", d('e'), nil}, {"broken", "", nil}, {"twice", d('1'), nil}, {"twice", d('2'), nil}}
	got := l.Compare("srv", live)
	want := []Result{
		{Surface: "srv", Tool: "broken", Status: StatusInvalid},
		{Surface: "srv", Tool: "drop", Status: StatusGone, Pinned: d('c')},
		{Surface: "srv", Tool: "edit", Status: StatusChanged, Pinned: d('b'), Live: d('f')},
		{Surface: "srv", Tool: "fresh", Status: StatusNew, Live: d('e')},
		{Surface: "srv", Tool: "keep", Status: StatusPinned, Pinned: d('a'), Live: d('a')},
		{Surface: "srv", Tool: "twice", Status: StatusInvalid},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got\n%v\nwant\n%v", got, want)
	}
	for _, r := range got {
		if r.Served() != (r.Tool == "keep") {
			t.Errorf("%s served %v", r.Tool, r.Served())
		}
	}
	// A surface never pinned: every tool is new, none served.
	for _, r := range l.Compare("other", []Tool{{"x", d('a'), nil}}) {
		if r.Status != StatusNew {
			t.Errorf("unpinned surface: %+v", r)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	l := New()
	l.SetSurface("srv", []Tool{{"keep", d('a'), nil}})
	cases := []struct {
		lock          *Lock
		surface, tool string
		live          Digest
		want          Status
	}{
		{l, "srv", "keep", d('a'), StatusPinned},
		{l, "srv", "keep", d('b'), StatusChanged},
		{l, "srv", "keep", "", StatusInvalid},
		{l, "srv", "new", d('a'), StatusNew},
		{l, "other", "keep", d('a'), StatusNew},
		{nil, "srv", "anything", d('z'), StatusPinned}, // no lock file: no pinning
	}
	for _, tc := range cases {
		if got := tc.lock.Check(tc.surface, tc.tool, tc.live); got != tc.want {
			t.Errorf("Check(%s, %s, %s) = %s, want %s", tc.surface, tc.tool, tc.live, got, tc.want)
		}
	}
}
