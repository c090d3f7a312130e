package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// measureFsync is the p50 of n appends of an audit-sized line, each
// followed by fsync, to a file in dir (the disk the bench's audit logs are
// on), with gap idle between them: back to back (gap 0) is what "one
// fsync" costs in the targets; after a millisecond idle, as at concurrency
// 1, the same fsync costs more on a virtual disk (the CPU has gone idle).
func measureFsync(dir string, n int, gap time.Duration) time.Duration {
	f, err := os.CreateTemp(dir, "fsync-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	line := []byte(strings.Repeat("x", 400) + "\n")
	lat := make([]time.Duration, n)
	for i := range lat {
		t := time.Now()
		if _, err := f.Write(line); err != nil {
			fatalf("%v", err)
		}
		if err := f.Sync(); err != nil {
			fatalf("%v", err)
		}
		lat[i] = time.Since(t)
		if gap > 0 {
			time.Sleep(gap) // the idle being measured, not synchronisation
		}
	}
	slices.Sort(lat)
	return lat[n/2]
}

// helloSource is the yardstick of process start: a Go program that prints
// one line and exits.
const helloSource = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"

// buildHello builds the Go hello-world into dir and returns its path.
func buildHello(dir string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(helloSource), 0o644); err != nil {
		fatalf("%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		fatalf("%v", err)
	}
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fatalf("build the hello-world: %v", err)
	}
	return bin
}

// starter is one kind of process start measured by starts.
type starter struct {
	name string
	run  func() error
}

// starts measures process start, n times each, interleaved: a Go
// hello-world, `toolgate version` (the CLI: runtime and every package
// initialiser, then a line), and a stdio instance until it answered
// initialize (start, workspace load, first answer); the same for the
// baseline. CPU per start is the child's own (getrusage).
func (b *bench) starts(n int) {
	hello := buildHello(filepath.Join(b.tmp, "hello"))
	ws := b.writeWorkspace(filepath.Join(b.tmp, "starts"), 64)
	list := []starter{
		{"Go hello-world", func() error { return runQuiet(hello) }},
		{"toolgate version", func() error { return runQuiet(b.bin, "version") }},
		{"toolgate stdio instance", func() error { return stdioStart(b.bin, ws) }},
	}
	if b.baseBin != "" {
		bws := b.baselineWorkspace(filepath.Join(b.tmp, "starts-base"), 64)
		list = append(list,
			starter{"baseline version", func() error { return runQuiet(b.baseBin, "version") }},
			starter{"baseline stdio instance", func() error { return stdioStart(b.baseBin, bws) }})
	}
	lat := make([][]time.Duration, len(list))
	cpu := make([]time.Duration, len(list))
	for range n {
		for i, s := range list {
			c0, t := childrenCPU(), time.Now()
			if err := s.run(); err != nil {
				fatalf("%s: %v", s.name, err)
			}
			lat[i] = append(lat[i], time.Since(t))
			cpu[i] += childrenCPU() - c0
		}
	}
	fmt.Printf("\n== process start, %d runs each, interleaved ==\n", n)
	fmt.Printf("%-26s | %8s %8s | %8s | %s\n", "program", "p50 µs", "p90 µs", "CPU µs", "÷ hello-world (p50, CPU)")
	p50 := func(i int) float64 { s := slices.Sorted(slices.Values(lat[i])); return us(s[len(s)/2]) }
	p90 := func(i int) float64 { s := slices.Sorted(slices.Values(lat[i])); return us(s[len(s)*9/10]) }
	c := func(i int) float64 { return us(cpu[i]) / float64(n) }
	for i, s := range list {
		fmt.Printf("%-26s | %8.0f %8.0f | %8.0f | %.2f, %.2f\n", s.name, p50(i), p90(i), c(i), p50(i)/p50(0), c(i)/c(0))
	}
	check("toolgate version start ÷ Go hello-world (p50)", p50(1)/p50(0), "≤", targetStart, "")
	check("toolgate version CPU ÷ Go hello-world", c(1)/c(0), "≤", targetStart, "")
}

// runQuiet runs argv and discards its output.
func runQuiet(argv ...string) error {
	return exec.Command(argv[0], argv[1:]...).Run()
}

// stdioStart starts `toolgate serve --stdio` on ws for the bench agent and
// its pack surface, sends initialize, waits for the answer, closes stdin
// and waits for the process to exit.
func stdioStart(bin, ws string) error {
	cmd := exec.Command(bin, "serve", "--stdio", "-w", ws, "--agent", "bench", "--surface", "bench")
	cmd.Dir = filepath.Dir(ws)
	cmd.Env = append(os.Environ(), "BENCH_TOKEN="+benchToken)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"bench-start","version":"1"}}}`+"\n", eraSession)
	line, rerr := bufio.NewReader(out).ReadString('\n')
	in.Close()
	werr := cmd.Wait()
	if rerr != nil || !strings.Contains(line, `"result"`) {
		return fmt.Errorf("stdio instance answered %q (%v; exit %v)", line, rerr, werr)
	}
	return nil
}
