package workspace

import (
	"strings"
	"testing"
	"time"
)

func TestParseByteSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    ByteSize
		wantErr bool
	}{
		{in: "1MiB", want: 1 << 20},
		{in: "512KiB", want: 512 << 10},
		{in: "2GiB", want: 2 << 30},
		{in: "10MB", want: 10_000_000},
		{in: "3KB", want: 3000},
		{in: "1GB", want: 1_000_000_000},
		{in: "64B", want: 64},
		{in: "100", want: 100},
		{in: " 2 KiB ", want: 2048},
		{in: "1048576GiB", want: 1 << 50},
		{in: "1048577GiB", wantErr: true},
		{in: "9223372036854775807", wantErr: true},
		{in: "1.5MiB", wantErr: true},
		{in: "0", wantErr: true},
		{in: "0KiB", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "1mb", wantErr: true},
		{in: "1TB", wantErr: true},
		{in: "MiB", wantErr: true},
		{in: "", wantErr: true},
		{in: "0x10", wantErr: true},
		{in: "1 000", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseByteSize(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseByteSize(%q) = %d, want an error", tt.in, got)
				}
				if !strings.Contains(err.Error(), "write it like 1MiB") {
					t.Errorf("error %q does not say how to write a size", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestScalarValues decodes durations, tiers and effects through Parse, the
// only way they are read.
func TestScalarValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		check      func(ws *Workspace) any
		want       any
		wantErr    string
	}{
		{name: "duration 30s", yaml: "wait: 30s", check: wait, want: 30 * time.Second},
		{name: "duration 1h30m", yaml: "wait: 1h30m", check: wait, want: 90 * time.Minute},
		{name: "duration 500ms", yaml: "wait: 500ms", check: wait, want: 500 * time.Millisecond},
		{name: "duration 1.5s", yaml: "wait: 1.5s", check: wait, want: 1500 * time.Millisecond},
		{name: "duration quoted", yaml: `wait: "2m"`, check: wait, want: 2 * time.Minute},
		{name: "duration without unit", yaml: "wait: 30", wantErr: `"30" is not a positive duration`},
		{name: "duration zero", yaml: "wait: 0s", wantErr: `"0s" is not a positive duration`},
		{name: "duration negative", yaml: "wait: -1s", wantErr: `"-1s" is not a positive duration`},
		{name: "duration in days", yaml: "wait: 1d", wantErr: `"1d" is not a positive duration`},
		{name: "duration empty", yaml: `wait: ""`, wantErr: `"" is not a positive duration`},
		{name: "duration overflow", yaml: "wait: 9999999999h", wantErr: "is not a positive duration"},
		{name: "duration mapping", yaml: "wait: {s: 1}", wantErr: "workspace.gateway.approvals.wait must be a single value, not a mapping"},
		{name: "count 1", yaml: "max_pending: 1", check: maxPending, want: Count(1)},
		{name: "count 1000", yaml: "max_pending: 1000", check: maxPending, want: Count(1000)},
		{name: "count zero", yaml: "max_pending: 0", wantErr: `max_pending must be a whole number of at least 1, not "0"`},
		{name: "count negative", yaml: "max_pending: -1", wantErr: `at least 1, not "-1"`},
		{name: "count quoted", yaml: `max_pending: "3"`, wantErr: `at least 1, not "3"`},
		{name: "count fraction", yaml: "max_pending: 1.5", wantErr: `at least 1, not "1.5"`},
		{name: "count hex", yaml: "max_pending: 0x10", wantErr: `at least 1, not "0x10"`},
		{name: "count overflow", yaml: "max_pending: 99999999999999999999", wantErr: "at least 1"},
		{name: "count bool", yaml: "max_pending: true", wantErr: `at least 1, not "true"`},
		{name: "count list", yaml: "max_pending: [1]", wantErr: "max_pending must be a single value, not a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "version: 1\ngateway:\n  approvals:\n    " + tt.yaml + "\n"
			ws, err := Parse("v.yaml", []byte(src))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.check(ws); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func wait(ws *Workspace) any { return ws.Gateway.Approvals.Wait.D() }

func maxPending(ws *Workspace) any { return ws.Gateway.Approvals.MaxPending }

func TestTiersAndEffects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		permission, effects string
		wantErr             string
	}{
		{permission: "open", effects: "read"},
		{permission: "cautious", effects: "write"},
		{permission: "strict", effects: "read"},
		{permission: "readonly", effects: "read"},
		{permission: "Open", effects: "read", wantErr: `unknown permission tier "Open"`},
		{permission: "none", effects: "read", wantErr: `unknown permission tier "none"`},
		{permission: `""`, effects: "read", wantErr: `unknown permission tier ""`},
		{permission: "open", effects: "readonly", wantErr: `unknown effect "readonly"; use read or write`},
		{permission: "open", effects: "[read]", wantErr: "effects must be a single value, not a list"},
	}
	for _, tt := range tests {
		t.Run(tt.permission+"/"+tt.effects, func(t *testing.T) {
			t.Parallel()
			src := "version: 1\ncommand_packs:\n  - id: p\n    permission: " + tt.permission +
				"\n    commands:\n      - {id: c, argv: [x], effects: " + tt.effects + "}\n"
			ws, err := Parse("t.yaml", []byte(src))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := ws.CommandPacks[0]
			if string(p.Permission) != tt.permission || string(p.Commands[0].Effects) != tt.effects {
				t.Errorf("got %q/%q", p.Permission, p.Commands[0].Effects)
			}
		})
	}
}

func TestUndeclaredEffectsIsWrite(t *testing.T) {
	t.Parallel()
	ws, err := Parse("e.yaml", []byte("version: 1\ncommand_packs: [{id: p, commands: [{id: c, argv: [x]}]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ws.CommandPacks[0].Commands[0].Effects; got != EffectWrite {
		t.Errorf("effects = %q, want write", got)
	}
}
