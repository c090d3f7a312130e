package workspace

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchWorkspace writes a large, realistic workspace: packs×commands
// commands with schemas and placeholders, and agents holding grants of
// every form with param_constraints.
func benchWorkspace(packs, commands, agents int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\ngateway:\n  listen: 127.0.0.1:7330\n  audit: {path: audit.jsonl, fsync: always}\n  approvals: {wait: 30s, ttl: 10m}\n")
	b.WriteString("credentials:\n")
	for i := range 20 {
		fmt.Fprintf(&b, "  cred-%d: {env: CRED_%d}\n", i, i)
	}
	b.WriteString("mcp_servers:\n")
	for i := range 20 {
		fmt.Fprintf(&b, `  - id: srv-%d
    url: https://mcp%d.example/mcp
    headers: {Authorization: "Bearer {credential.cred-%d}"}
    permission: cautious
    permission_overrides: {delete: strict}
    effects: {search: read, fetch: read, store: write}
    scopes: [knowledge:read]
`, i, i, i%20)
	}
	b.WriteString("command_packs:\n")
	for p := range packs {
		fmt.Fprintf(&b, `  - id: pack-%d
    description: Generated pack %d.
    permission: cautious
    permission_overrides: {cmd-1: strict}
    timeout: 30s
    timeout_overrides: {cmd-2: 5s}
    max_output: 1MiB
    requires: [{binary: tool%d, version: ">=1.2"}]
    credentials_ref: cred-%d
    env: {TOKEN: "{credential.cred-%d}", LANG: C}
    commands:
`, p, p, p, p%20, p%20)
		for c := range commands {
			effects := "read"
			if c%4 == 0 {
				effects = "write"
			}
			fmt.Fprintf(&b, `      - id: cmd-%d
        description: Command %d of pack %d, which reads a file and filters it.
        argv: [tool%d, sub%d, "--repo={repo}", --limit, "{limit}", --, "{path}", "{a: .b}"]
        inputs:
          type: object
          properties:
            repo: {type: string, description: "owner/name", pattern: "^[a-z0-9-]+/[a-z0-9-]+$"}
            limit: {type: integer, minimum: 1, maximum: 1000, default: 30}
            path: {type: string, description: File to read}
            mode: {type: string, enum: [fast, slow]}
          required: [repo, path]
          additionalProperties: false
        effects: %s
        scopes: [repo:read]
        output: {parse: json}
`, c, c, p, p, c, effects)
		}
	}
	b.WriteString("agents:\n")
	for a := range agents {
		p, q := a%packs, (a*7+3)%packs
		fmt.Fprintf(&b, `  - id: agent-%d
    token: {env: AGENT_%d_TOKEN}
    scopes: [workspace:read, repo:read]
    grants:
      - pack:pack-%d
      - server:srv-%d
      - tool:pack-%d:cmd-%d
      - pack-%d-cmd-%d
      - op: tool:pack-%d:cmd-0
        param_constraints:
          repo: {enum: [toolgate/toolgate, toolgate/docs]}
          limit: {minimum: 1, maximum: 100}
          path: {path_within: /srv/data, max_length: 256, pattern: "[a-z/]+"}
      - op: tool:srv-%d:store
        param_constraints: {max_size: 1024, allowed_kind: [note, contact]}
`, a, a, p, a%20, q, a%commands, q, (a+1)%commands, p, a%20)
	}
	return []byte(b.String())
}

// BenchmarkLoad is the whole load of a 3.1 MB workspace (200 packs × 20
// commands, 500 agents), parsed by yaml.v3. Besides wall time it reports
// cpu-ms/op, the process's CPU time (garbage collection included) per
// load, which is steadier than wall time on a shared machine. Target:
// ≤ 300 ms.
func BenchmarkLoad(b *testing.B) {
	data := benchWorkspace(200, 20, 500)
	if _, err := Parse("bench.yaml", data); err != nil {
		b.Fatalf("generated workspace does not load: %.2000v", err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	for b.Loop() {
		if _, err := Parse("bench.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/1e6/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestBenchWorkspaceLoads keeps the benchmark's generator honest: the
// workspace it times must be valid and as large as advertised.
func TestBenchWorkspaceLoads(t *testing.T) {
	t.Parallel()
	ws, err := Parse("bench.yaml", benchWorkspace(20, 20, 50))
	if err != nil {
		t.Fatalf("%.2000v", err)
	}
	cmds := 0
	for _, p := range ws.CommandPacks {
		cmds += len(p.Commands)
	}
	if len(ws.CommandPacks) != 20 || cmds != 400 || len(ws.Agents) != 50 || len(ws.Agents[0].Grants) != 6 {
		t.Errorf("got %d packs, %d commands, %d agents", len(ws.CommandPacks), cmds, len(ws.Agents))
	}
}

// BenchmarkYAMLParse is the floor under BenchmarkLoad: the same document
// parsed into yaml.Nodes by yaml.v3 only, without decoding or checks.
func BenchmarkYAMLParse(b *testing.B) {
	data := benchWorkspace(200, 20, 500)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if _, errs := parseDocument("bench.yaml", data); errs != nil {
			b.Fatal(errs)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/1e6/float64(b.N), "cpu-ms/op")
}

// BenchmarkDecode is the rest of BenchmarkLoad: the loader's own work
// (decoding, bundled packs, checks) on the yaml.Node tree parsed once.
func BenchmarkDecode(b *testing.B) {
	data := benchWorkspace(200, 20, 500)
	root, errs := parseDocument("bench.yaml", data)
	if errs != nil {
		b.Fatal(errs)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		if _, err := decodeWorkspace("bench.yaml", data, root); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-start)/1e6/float64(b.N), "cpu-ms/op")
}
