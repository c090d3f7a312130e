package packs

import (
	"strings"
	"testing"
)

func TestReadReport(t *testing.T) {
	t.Parallel()
	rep, err := readReport(strings.NewReader(`{"exit":3,"killed":2,"outside_group":1,"limit":"traced"}` + "\n"))
	if err != nil || rep.Exit != 3 || rep.Killed != 2 || rep.OutsideGroup != 1 || rep.Limit != "traced" {
		t.Errorf("readReport = %+v, %v", rep, err)
	}
	for _, in := range []string{"", "{", strings.Repeat(" ", maxReportBytes) + "{}"} {
		if _, err := readReport(strings.NewReader(in)); err == nil {
			t.Errorf("readReport(%.20q) accepted", in)
		}
	}
}
