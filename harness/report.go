package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints a report for people: one block per row with both sets
// and the delta, then the run's verdict with counts.
func WriteText(w io.Writer, rep Report) error {
	var b strings.Builder
	counts := map[Verdict]int{}
	for _, r := range rep.Rows {
		counts[r.Verdict]++
		fmt.Fprintf(&b, "%s/%s: %s\n", r.Agent, r.Provider, strings.ToUpper(string(r.Verdict)))
		fmt.Fprintf(&b, "  harness: %s\n", setText(r.Harness))
		fmt.Fprintf(&b, "  grant:   %s\n", setText(r.Grant))
		if len(r.Delta.HarnessOnly) > 0 {
			fmt.Fprintf(&b, "  harness only: %s\n", strings.Join(r.Delta.HarnessOnly, ", "))
		}
		if len(r.Delta.GrantOnly) > 0 {
			fmt.Fprintf(&b, "  grant only:   %s\n", strings.Join(r.Delta.GrantOnly, ", "))
		}
		if r.Note != "" {
			fmt.Fprintf(&b, "  note: %s\n", r.Note)
		}
	}
	fmt.Fprintf(&b, "run: %s (%d green, %d red, %d unknown)\n", strings.ToUpper(string(rep.Run)), counts[Green], counts[Red], counts[Unknown])
	if rep.Run == Red && counts[Red] == 0 {
		b.WriteString("every row is unknown: nothing was verified, so the run is red\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func setText(s []string) string {
	if len(s) == 0 {
		return "(nothing)"
	}
	return strings.Join(s, ", ")
}

// WriteJSON prints the report as {"run": …, "rows": […]}.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
