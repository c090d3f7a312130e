package harness

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// codexCorpus is testdata/codex-config: Codex config.toml files whose
// first line says what Codex does with them, "# want refused N: message"
// (Codex will not start; toolgate refuses at line N with that message) or
// "# want read: ids" (the servers Codex runs, enabled). The e2e test
// TestCodexReadsTheCorpus holds the real Codex CLI to the same lines.
type codexCase struct {
	name, path string
	data       []byte
	refused    bool
	line       int
	msg        string
	enabled    []string
}

func loadCodexCorpus(t *testing.T) []codexCase {
	t.Helper()
	paths, err := filepath.Glob("testdata/codex-config/*.toml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []codexCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		c := codexCase{name: strings.TrimSuffix(filepath.Base(p), ".toml"), path: p, data: data}
		switch {
		case strings.HasPrefix(first, "# want refused "):
			n, msg, ok := strings.Cut(strings.TrimPrefix(first, "# want refused "), ": ")
			line, err := strconv.Atoi(n)
			if !ok || err != nil {
				t.Fatalf("%s: bad header %q", p, first)
			}
			c.refused, c.line, c.msg = true, line, msg
		case strings.HasPrefix(first, "# want read:"):
			c.enabled = strings.Fields(strings.TrimPrefix(first, "# want read:"))
		default:
			t.Fatalf("%s: first line %q is neither '# want refused N: …' nor '# want read: …'", p, first)
		}
		out = append(out, c)
	}
	return out
}

// TestReadCodexConfig: what Codex refuses (a duplicate key, a repeated
// table, enabled = fals, an unterminated string, a value of the wrong
// type, a server with no transport …) toolgate refuses at the line, and
// what Codex reads toolgate reads, with the same servers enabled.
func TestReadCodexConfig(t *testing.T) {
	t.Parallel()
	for _, c := range loadCodexCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc, err := readCodexConfig(c.path, c.data)
			if !c.refused {
				if err != nil {
					t.Fatalf("Codex reads it, toolgate refuses: %v", err)
				}
				var enabled []string
				for _, id := range slices.Sorted(maps.Keys(doc.MCPServers)) {
					if e := doc.MCPServers[id].Enabled; e == nil || *e {
						enabled = append(enabled, id)
					}
				}
				slices.Sort(c.enabled)
				if !slices.Equal(enabled, c.enabled) {
					t.Fatalf("enabled servers %v, want %v", enabled, c.enabled)
				}
				return
			}
			var te *tomlError
			if !errors.As(err, &te) {
				t.Fatalf("Codex refuses it, toolgate: %v (%T)", err, err)
			}
			prefix := fmt.Sprintf("%s:%d:", c.path, c.line)
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q, want %q… containing %q", err, prefix, c.msg)
			}
		})
	}
}

// TestCodexRefusalVerdict: parity over a config Codex refuses is red and
// names the file and line.
func TestCodexRefusalVerdict(t *testing.T) {
	t.Parallel()
	_, p := load(t, "testdata/parity/toolgate.yaml")
	for _, c := range loadCodexCorpus(t) {
		if !c.refused {
			continue
		}
		row := SpecRow{Agent: "coder", Provider: Codex, ConfigTOML: c.path}
		got := Check(p, &Spec{Rows: []*SpecRow{&row}}).Rows[0]
		want := fmt.Sprintf("cannot read the allowlist: %s:%d:", c.path, c.line)
		if got.Verdict != Red || !strings.Contains(got.Note, want) || !strings.Contains(got.Note, "Codex refuses this file too") {
			t.Errorf("%s: %s %q, want red naming %q", c.name, got.Verdict, got.Note, want)
		}
	}
}

// TestCodexConfigRoundTrip: what mcp-config writes for Codex — with names,
// commands and tools holding quotes, backslashes, control characters and
// non-ASCII — reads back as the same servers.
func TestCodexConfigRoundTrip(t *testing.T) {
	t.Parallel()
	hostile := "q\"uo\\te\ttab\nnl\x01\x7f é 🎉 [x] = #"
	servers := []server{
		{name: "json-tools", tools: []string{"query", "echo"}, command: "/usr/local/bin/toolgate",
			args: []string{"serve", "--stdio", "--agent", "reader"}, envVars: []string{"READER_TOKEN", "HOME"}},
		{name: "every.tool of " + hostile, command: hostile, args: []string{hostile, ""}},
		{name: "none", tools: []string{}, command: "toolgate", args: []string{}},
		{name: "mem", tools: []string{"read_graph", hostile}, url: "http://127.0.0.1:8080/mcp/mem?a=b&c=" + hostile, tokenVar: "TOOLGATE_TOKEN"},
	}
	for _, wait := range []time.Duration{0, 10 * time.Minute} {
		path := filepath.Join(t.TempDir(), "config.toml")
		doc, err := readCodexConfig(path, codexConfig(servers, wait))
		if err != nil {
			t.Fatalf("wait %v: %v\n%s", wait, err, codexConfig(servers, wait))
		}
		if len(doc.MCPServers) != len(servers) {
			t.Fatalf("read %d servers, wrote %d", len(doc.MCPServers), len(servers))
		}
		for _, s := range servers {
			got, ok := doc.MCPServers[s.name]
			if !ok {
				t.Fatalf("server %q not read back", s.name)
			}
			want := codexServer{ApprovalMode: ptr("approve"), EnabledTools: nilOr(s.tools)}
			if s.url != "" {
				want.URL, want.BearerTokenEnvVar = &s.url, &s.tokenVar
			} else {
				want.Command, want.Args = &s.command, &s.args
				if len(s.envVars) > 0 {
					envVars := make([]any, len(s.envVars))
					for i, v := range s.envVars {
						envVars[i] = v
					}
					want.EnvVars = &envVars
				}
			}
			if wait > 0 {
				want.ToolTimeoutSec = ptr(float64((wait + codexTimeoutMargin) / time.Second))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%q:\n got %s\nwant %s", s.name, show(got), show(want))
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

func nilOr(s []string) *[]string {
	if s == nil {
		return nil
	}
	return &s
}

func show(s codexServer) string {
	v := reflect.ValueOf(s)
	var b strings.Builder
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsZero() {
			if f.Kind() == reflect.Pointer {
				f = f.Elem()
			}
			fmt.Fprintf(&b, "%s=%#v ", v.Type().Field(i).Name, f.Interface())
		}
	}
	return b.String()
}

// TestDecodeTOMLHostile: input built to hurt the decoder is refused with
// a position, not a crash.
func TestDecodeTOMLHostile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, want string
	}{
		{"deeply nested arrays", "a = " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n", "x.toml:1:"},
		{"deeply nested inline tables", "a = " + strings.Repeat("{b=", 50000) + "1" + strings.Repeat("}", 50000) + "\n", "x.toml:1:"},
		{"NUL in a key", "[mcp_servers.\x00]\n", "x.toml:1:"},
		{"invalid UTF-8 in a string", "[mcp_servers.a]\ncommand = \"\xff\"\n", "x.toml:2:"},
		{"a line too long to quote", "[mcp_servers.a]\ncommand = " + strings.Repeat("x", 10000) + "\n", "x.toml:2:"},
		{"CR without LF", "[mcp_servers.a]\rcommand = \"x\"\n", "x.toml:1:"},
	}
	for _, tc := range cases {
		var doc codexFile
		err := decodeTOML("x.toml", []byte(tc.src), &doc)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || len(err.Error()) > 400 {
			t.Errorf("%s: %.400v, want an error starting %q", tc.name, err, tc.want)
		}
	}
}
