package packs

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// buildArgvEcho compiles testdata/argvecho, a program that prints the argv
// it received as a JSON array.
func buildArgvEcho(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the argv echo program: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "argvecho")
	out, err := exec.Command(goBin, "build", "-o", bin, "./testdata/argvecho/main.go").CombinedOutput()
	if err != nil {
		t.Fatalf("go build argvecho: %v\n%s", err, out)
	}
	return bin
}

// TestInjectionValuesArriveAsOneArgument is the security test of value-only
// substitution: whatever a parameter holds — shell operators, command
// substitution, quotes, whitespace, newlines, globs — the process receives
// it as exactly one argv element, byte for byte.
func TestInjectionValuesArriveAsOneArgument(t *testing.T) {
	t.Parallel()
	echo := buildArgvEcho(t)
	r := newTestRunner(t, nil)
	values := []string{
		"; rm -rf /",
		"a | cat /etc/passwd",
		"$(id)",
		"`id`",
		"two words",
		"line one\nline two",
		`"double" 'single'`,
		"*.go ~ $HOME ${PATH}",
		"a && b || c > out < in 2>&1 &",
		"\ttab and trailing space ",
		"",
		"{other}",
		"ünïcödé ✓",
	}
	tests := []struct {
		name string
		argv []string
		want func(v string) []string
	}{
		{"whole element", []string{echo, "{v}"}, func(v string) []string { return []string{v} }},
		{"inside a literal", []string{echo, "--value={v}", "tail"}, func(v string) []string { return []string{"--value=" + v, "tail"} }},
		{"after --", []string{echo, "--", "{v}"}, func(v string) []string { return []string{"--", v} }},
	}
	for _, tt := range tests {
		for _, v := range values {
			t.Run(tt.name+"/"+v, func(t *testing.T) {
				t.Parallel()
				c := command("echo", tt.argv...)
				res := mustRun(t, r, packOf(c), c, map[string]any{"v": v})
				if res.Err != "" {
					t.Fatalf("run failed: %s %s", res.Err, res.StderrTail)
				}
				var got []string
				if err := json.Unmarshal(res.Stdout, &got); err != nil {
					t.Fatalf("argvecho output %q: %v", res.Stdout, err)
				}
				if want := tt.want(v); !slices.Equal(got, want) {
					t.Errorf("process received %q, want %q", got, want)
				}
			})
		}
	}
}

// TestInjectionLeadingDash: an option smuggled in as a value is refused
// before anything runs, unless it follows a literal "--".
func TestInjectionLeadingDash(t *testing.T) {
	t.Parallel()
	echo := buildArgvEcho(t)
	r := newTestRunner(t, nil)
	tests := []struct {
		name    string
		argv    []string
		value   string
		want    []string
		refused bool
	}{
		{"--option refused", []string{echo, "{v}"}, "--upload-pack=touch /tmp/pwned", nil, true},
		{"-x refused", []string{echo, "log", "{v}"}, "-p", nil, true},
		{"after -- allowed", []string{echo, "--", "{v}"}, "--upload-pack=x", []string{"--", "--upload-pack=x"}, false},
		{"inside a literal cannot start an element", []string{echo, "--ref={v}"}, "--x", []string{"--ref=--x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := command("echo", tt.argv...)
			inv, err := r.Prepare(packOf(c), c, map[string]any{"v": tt.value})
			if tt.refused {
				if err == nil || !strings.Contains(err.Error(), `parameter "v"`) || !strings.Contains(err.Error(), `starts with "-"`) {
					t.Fatalf("Prepare = %v, %v; want a refusal naming parameter v", inv, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(t.Context(), inv)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			if err := json.Unmarshal(res.Stdout, &got); err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("process received %q (%v), want %q", got, err, tt.want)
			}
		})
	}
}
