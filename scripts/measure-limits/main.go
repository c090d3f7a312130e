// Command measure-limits runs every read command of the bundled packs that
// works offline on real inputs available on any development machine, and
// prints how long each took, how much it printed and how much memory it
// needed, as the markdown tables of docs/limits.md. The built-in default
// timeout, output cap and memory bound of packs/runner.go are chosen from
// these figures.
//
// Memory is measured two ways: the peak resident set the kernel reports
// for the command, and the least max_memory (RLIMIT_AS, address space per
// process, which is what the runner enforces) under which the command
// still succeeds, found by bisection to within 2 MiB.
//
// Inputs: this repository's own git history (git pack), the Go source
// tree of the toolchain running this program, $(go env GOROOT)/src
// (ripgrep pack), and a generated JSON file of 20 MB (json-tools pack).
// gh and the coding-agent packs need a network and a login, so they are
// not measured; their packs declare their own bounds.
//
// Usage, from the repository root:
//
//	go run ./scripts/measure-limits [-runs 5] [-memory=false]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// measureCase is one call of a bundled command.
type measureCase struct {
	pack, command string
	args          map[string]any
	// input names what the call reads, for the table.
	input string
}

// measurement is what runs of one case produced.
type measurement struct {
	c           measureCase
	median, max time.Duration
	bytes       int64
	exit        int
	// peakRSS is the largest resident set of any run; leastAS the least
	// RLIMIT_AS under which the command succeeded (0: not measured).
	peakRSS, leastAS int64
}

func main() {
	// The runner re-executes this binary as each command's supervisor.
	packs.MaybeSupervise()
	runs := flag.Int("runs", 5, "runs per command; the table shows the median and the slowest")
	memory := flag.Bool("memory", true, "also find each command's least max_memory by bisection (slower)")
	probe := flag.Bool("probe", false, "exit at once (the Go runtime's own floor is measured on this binary)")
	flag.Parse()
	if *probe {
		return
	}
	if err := run(*runs, *memory); err != nil {
		fmt.Fprintln(os.Stderr, "measure-limits:", err)
		os.Exit(1)
	}
}

func run(runs int, memory bool) error {
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
		return fmt.Errorf("run from the repository root (no .git in %s)", repo)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	goSrc := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	tmp, err := os.MkdirTemp("", "measure-limits-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bigJSON := filepath.Join(tmp, "big.json")
	if err := writeBigJSON(bigJSON, 100_000); err != nil {
		return err
	}
	blameFile, err := largestGoFile(repo)
	if err != nil {
		return err
	}
	ws, err := workspace.Parse("measure.yaml", []byte(fmt.Sprintf(`version: 1
command_packs:
  - {use: bundled/git, cwd: %q}
  - {use: bundled/ripgrep, cwd: %q}
  - {use: bundled/json-tools, cwd: %q}
`, repo, goSrc, tmp)))
	if err != nil {
		return err
	}
	commits := strings.Count(gitOut(repo, "rev-list", "HEAD"), "\n")
	cases := []measureCase{
		{"git", "status", nil, "this repository"},
		{"git", "log", nil, "this repository (default 50 commits)"},
		{"git", "log", map[string]any{"max_count": 1000}, fmt.Sprintf("this repository, all %d commits", commits)},
		{"git", "diff", map[string]any{"from": firstCommit(repo), "to": "HEAD"}, "this repository, first commit to HEAD"},
		{"git", "diff-staged", nil, "this repository"},
		{"git", "show", map[string]any{"rev": "HEAD"}, "this repository, HEAD"},
		{"git", "blame", map[string]any{"file": blameFile}, "this repository, " + blameFile},
		{"git", "branch-list", nil, "this repository"},
		{"ripgrep", "search", map[string]any{"pattern": `func New\w*\(`}, "GOROOT/src, default 20 per file"},
		{"ripgrep", "search", map[string]any{"pattern": `func New\w*\(`, "max_count": 1000}, "GOROOT/src, 1000 per file"},
		{"ripgrep", "search-fixed", map[string]any{"text": "context.Context", "glob": "*.go"}, "GOROOT/src *.go"},
		{"ripgrep", "count", map[string]any{"pattern": `^func `}, "GOROOT/src"},
		{"ripgrep", "files", nil, "GOROOT/src"},
		{"ripgrep", "files", map[string]any{"glob": "*.s"}, "GOROOT/src *.s"},
		{"json-tools", "validate", map[string]any{"file": "big.json"}, "generated 100k-record JSON"},
		{"json-tools", "keys", map[string]any{"file": "big.json"}, "generated 100k-record JSON"},
		{"json-tools", "query", map[string]any{"filter": ".items[42]", "file": "big.json"}, "generated 100k-record JSON, one record"},
		{"json-tools", "query", map[string]any{"filter": "[.items[] | select(.id % 1000 == 0) | .name]", "file": "big.json"}, "generated 100k-record JSON, 100 names"},
		{"json-tools", "query", map[string]any{"filter": ".items[].name", "file": "big.json"}, "generated 100k-record JSON, every name"},
	}
	r := packs.NewRunner(nil, os.Getenv)
	r.DefaultTimeout = 10 * time.Minute
	r.DefaultMaxOutput = 1 << 30
	r.DefaultMaxMemory = unboundedAS
	var ms []measurement
	for _, c := range cases {
		m, err := measure(r, ws, c, runs)
		if err != nil {
			return err
		}
		if memory {
			if m.leastAS, err = leastMaxMemory(r, ws, c); err != nil {
				return err
			}
		}
		ms = append(ms, m)
	}
	printTable(ms, runs)
	if memory {
		fmt.Println()
		printMemoryTable(ms)
		fmt.Println()
		if err := printRuntimeFloors(r); err != nil {
			return err
		}
	}
	if info, err := os.Stat(bigJSON); err == nil {
		fmt.Printf("\nGenerated JSON: %d bytes. Machine: %s/%s, %d CPUs, %s.\n", info.Size(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	}
	return nil
}

// unboundedAS is the max_memory of the timing runs: far above any need.
const unboundedAS = 64 << 30

// leastMaxMemory bisects the least max_memory under which c still exits 0
// with the same output size, to within 2 MiB.
func leastMaxMemory(r *packs.Runner, ws *workspace.Workspace, c measureCase) (int64, error) {
	pack, cmd, err := find(ws, c)
	if err != nil {
		return 0, err
	}
	args := c.args
	if args == nil {
		args = map[string]any{}
	}
	ok := func(limit int64) (bool, int64, error) {
		p := *pack
		p.MaxMemory = workspace.ByteSize(limit)
		inv, err := r.Prepare(&p, cmd, args)
		if err != nil {
			return false, 0, err
		}
		res, err := r.Run(context.Background(), inv)
		if err != nil {
			return false, 0, err
		}
		return res.OK(), res.OutputBytes, nil
	}
	good, want, err := ok(unboundedAS)
	if err != nil || !good {
		return 0, fmt.Errorf("%s:%s fails even unbounded: %v", c.pack, c.command, err)
	}
	lo, hi := int64(1<<20), int64(unboundedAS) // lo fails, hi succeeds
	for hi-lo > 2<<20 {
		mid := lo + (hi-lo)/2
		good, n, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if good && n == want {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// printRuntimeFloors measures the least max_memory under which a bare
// runtime starts at all: a Go program (this one, as a stand-in for gh and
// other Go CLIs), Node, and Claude Code's CLI when it is on PATH. A
// default below these would break every pack running them.
func printRuntimeFloors(r *packs.Runner) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	probes := []struct {
		name string
		argv []string
	}{
		{"Go program (this binary, -probe)", []string{self, "-probe"}},
		{"node -e 0", []string{"node", "-e", "0"}},
		{"claude --version", []string{"claude", "--version"}},
	}
	fmt.Println("| runtime | least max_memory that starts it |")
	fmt.Println("|---|---:|")
	for _, p := range probes {
		if _, err := exec.LookPath(p.argv[0]); err != nil {
			fmt.Printf("| %s | not installed |\n", p.name)
			continue
		}
		ws, err := workspace.Parse("probe.yaml", []byte(fmt.Sprintf("version: 1\ncommand_packs:\n  - id: probe\n    commands:\n      - {id: run, argv: %s, effects: read}\n", quoteList(p.argv))))
		if err != nil {
			return err
		}
		least, err := leastMaxMemory(r, ws, measureCase{pack: "probe", command: "run"})
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %.0f MiB |\n", p.name, float64(least)/(1<<20))
	}
	return nil
}

func quoteList(items []string) string {
	b, _ := json.Marshal(items)
	return string(b)
}

func printMemoryTable(ms []measurement) {
	fmt.Println("| command | input | peak RSS | least max_memory that succeeds |")
	fmt.Println("|---|---|---:|---:|")
	for _, m := range ms {
		args := ""
		if len(m.c.args) > 0 {
			b, _ := json.Marshal(m.c.args)
			args = " `" + strings.ReplaceAll(string(b), "|", `\|`) + "`"
		}
		fmt.Printf("| %s:%s%s | %s | %.1f MiB | %.0f MiB |\n", m.c.pack, m.c.command, args, m.c.input,
			float64(m.peakRSS)/(1<<20), float64(m.leastAS)/(1<<20))
	}
}

func find(ws *workspace.Workspace, c measureCase) (*workspace.CommandPack, *workspace.Command, error) {
	for _, p := range ws.CommandPacks {
		if p.ID != c.pack {
			continue
		}
		for _, x := range p.Commands {
			if x.ID == c.command {
				return p, x, nil
			}
		}
	}
	return nil, nil, fmt.Errorf("no command %s:%s", c.pack, c.command)
}

func measure(r *packs.Runner, ws *workspace.Workspace, c measureCase, runs int) (measurement, error) {
	var pack *workspace.CommandPack
	var cmd *workspace.Command
	for _, p := range ws.CommandPacks {
		if p.ID != c.pack {
			continue
		}
		pack = p
		for _, x := range p.Commands {
			if x.ID == c.command {
				cmd = x
			}
		}
	}
	if cmd == nil {
		return measurement{}, fmt.Errorf("no command %s:%s", c.pack, c.command)
	}
	args := c.args
	if args == nil {
		args = map[string]any{}
	}
	m := measurement{c: c}
	var times []time.Duration
	for range runs {
		inv, err := r.Prepare(pack, cmd, args)
		if err != nil {
			return m, err
		}
		res, err := r.Run(context.Background(), inv)
		if err != nil {
			return m, err
		}
		times = append(times, res.Duration)
		m.bytes, m.exit = res.OutputBytes, res.ExitCode
		m.peakRSS = max(m.peakRSS, res.PeakRSS)
	}
	slices.Sort(times)
	m.median, m.max = times[len(times)/2], times[len(times)-1]
	return m, nil
}

func printTable(ms []measurement, runs int) {
	fmt.Printf("| command | input | median | slowest of %d | output bytes | exit |\n", runs)
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, m := range ms {
		args := ""
		if len(m.c.args) > 0 {
			b, _ := json.Marshal(m.c.args)
			args = " `" + strings.ReplaceAll(string(b), "|", `\|`) + "`"
		}
		fmt.Printf("| %s:%s%s | %s | %s | %s | %d | %d |\n", m.c.pack, m.c.command, args, m.c.input,
			m.median.Round(100*time.Microsecond), m.max.Round(100*time.Microsecond), m.bytes, m.exit)
	}
}

// writeBigJSON writes {"meta": …, "items": [n records]} deterministically.
func writeBigJSON(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, `{"meta":{"generator":"measure-limits","count":%d},"items":[`, n)
	for i := range n {
		if i > 0 {
			f.WriteString(",")
		}
		fmt.Fprintf(f, `{"id":%d,"name":"item-%06d","tags":["t%d","t%d"],"price":%d.%02d,"active":%t,"note":"record %d of a generated file used to measure command output"}`,
			i, i, i%7, i%13, i%1000, i%100, i%3 == 0, i)
	}
	f.WriteString("]}\n")
	return f.Close()
}

func gitOut(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, _ := cmd.Output()
	return string(out)
}

func firstCommit(repo string) string {
	lines := strings.Fields(gitOut(repo, "rev-list", "--max-parents=0", "HEAD"))
	if len(lines) == 0 {
		return "HEAD"
	}
	return lines[0]
}

// largestGoFile is the tracked .go file with the most lines, the worst
// case for blame.
func largestGoFile(repo string) (string, error) {
	best, most := "", -1
	for _, f := range strings.Fields(gitOut(repo, "ls-files", "*.go")) {
		data, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			continue
		}
		if n := strings.Count(string(data), "\n"); n > most {
			best, most = f, n
		}
	}
	if best == "" {
		return "", fmt.Errorf("no tracked .go files in %s", repo)
	}
	return best, nil
}
