package packs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

func TestCanonicalDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, err string }{
		{in: "3.0", want: "3"},
		{in: "-3.50", want: "-3.5"},
		{in: "0.1000000000000000055511151231257827", want: "0.1000000000000000055511151231257827"},
		{in: "9007199254740993.0", want: "9007199254740993"},
		{in: "1.5e3", want: "1500"},
		{in: "1.5E+3", want: "1500"},
		{in: "15e-3", want: "0.015"},
		{in: "-0.0", want: "0"},
		{in: "0e10", want: "0"},
		{in: "123.456e-1", want: "12.3456"},
		{in: "1e-2", want: "0.01"},
		{in: "12e-1", want: "1.2"},
		{in: "0.00120", want: "0.0012"},
		{in: "1e1000000000", err: "pass the value as a string"},
		{in: "1e1025", err: "pass the value as a string"},
		{in: "1e-1025", err: "pass the value as a string"},
		{in: "01.5", err: "not a JSON number"},
		{in: "1.", err: "not a JSON number"},
		{in: ".5", err: "not a JSON number"},
		{in: "1e", err: "not a JSON number"},
		{in: "0x10", err: "not a JSON number"},
		{in: "NaN", err: "not a JSON number"},
	}
	for _, tt := range tests {
		got, err := canonicalDecimal(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: got %q, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestBuildArgvJSONNumberExact: numbers decoded with UseNumber reach argv
// digit for digit.
func TestBuildArgvJSONNumberExact(t *testing.T) {
	t.Parallel()
	cmd := &workspace.Command{Argv: []string{"p", "{a}", "--n={b}", "{c}"}}
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(`{"a": 9007199254740993, "b": 0.1000000000000000055511151231257827, "c": 2.50e2}`))
	dec.UseNumber()
	if err := dec.Decode(&args); err != nil {
		t.Fatal(err)
	}
	got, err := BuildArgv(cmd, args)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p", "9007199254740993", "--n=0.1000000000000000055511151231257827", "250"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("argv %q, want %q", got, want)
	}
}
