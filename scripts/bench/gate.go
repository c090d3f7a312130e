package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// benchToken is the bench agent's bearer token (loopback only).
const benchToken = "bench-token-0123456789"

// workspaceYAML is the bench workspace: the echo server over HTTP and over
// stdio, the bench pack (packCommands), one agent granted all three; fsync as asked,
// sessions raised for the idle-session measurement (0 leaves the line
// out, for a toolgate older than the session caps). Tiers are the
// defaults (cautious): echo is declared read, so calls are allowed
// without approval but still fully decided and audited.
//
// metricsOpen serves /metrics without a token (the idle runs' -idle-detail).
func workspaceYAML(echoURL string, stdioArgv []string, files, fsync string, sessions int, metricsOpen bool) string {
	q := make([]string, len(stdioArgv))
	for i, a := range stdioArgv {
		q[i] = fmt.Sprintf("%q", a)
	}
	limits := ""
	if sessions > 0 {
		limits = fmt.Sprintf("\n  sessions: {max_per_agent: %d}", sessions)
	}
	if metricsOpen {
		limits += "\n  metrics: {open: true}"
	}
	return fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: %s}%s
mcp_servers:
  - id: echohttp
    url: %s
    effects: {echo: read}
  - id: echostdio
    command: [%s]
    effects: {echo: read}
command_packs:
  - id: bench
    commands:
%sagents:
  - id: bench
    token: {env: BENCH_TOKEN}
    grants: [tool:echohttp:echo, tool:echostdio:echo, pack:bench]
`, fsync, limits, echoURL, strings.Join(q, ", "), packYAML(files))
}

// gate is one running toolgate daemon.
type gate struct {
	cmd  *exec.Cmd
	pid  int
	base string
	dir  string
}

// startToolgate runs `toolgate serve` on a free loopback port for the
// workspace ws (in its own directory, its log in toolgate.log there) and
// waits until /healthz answers.
func startToolgate(bin, ws string, env ...string) *gate {
	addr := freeAddr()
	argv := []string{bin, "--log-format", "json", "serve", "-w", ws, "--listen", addr}
	env = append([]string{"BENCH_TOKEN=" + benchToken}, env...)
	return launch("toolgate", argv, filepath.Dir(ws), addr, env, func(g *gate) bool {
		res, err := http.Get(g.base + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// freeAddr is a loopback address no one listens on now.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatalf("find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// launch starts argv in dir (its output in dir/<name>.log, env added to
// the bench's, killed if the bench dies) as the gateway at addr and polls
// ready until it reports true, for a minute at most.
func launch(name string, argv []string, dir, addr string, env []string, ready func(*gate) bool) *gate {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		fatalf("%s log: %v", name, err)
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fatalf("start %s: %v", name, err)
	}
	g := &gate{cmd: cmd, pid: cmd.Process.Pid, base: "http://" + addr, dir: dir}
	deadline := time.Now().Add(60 * time.Second)
	for !ready(g) {
		if time.Now().After(deadline) {
			g.stop()
			log, _ := os.ReadFile(logPath)
			fatalf("%s did not become ready at %s\n%s", name, g.base, log)
		}
		time.Sleep(50 * time.Millisecond) // polling readiness of another process
	}
	return g
}

// stop ends toolgate with SIGINT (so a CPU profile is written) and waits.
func (g *gate) stop() {
	_ = g.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = g.cmd.Process.Kill()
		<-done
	}
}

// startEchoHTTP runs this program as the HTTP echo server and returns its
// URL and pid.
func startEchoHTTP(self string) (*exec.Cmd, string) {
	cmd := exec.Command(self, "-role", "echo-http")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatalf("echo server: %v", err)
	}
	if err := cmd.Start(); err != nil {
		fatalf("start echo server: %v", err)
	}
	var word, addr string
	if _, err := fmt.Fscanln(out, &word, &addr); err != nil || word != "listening" {
		fatalf("echo server did not start: %v", err)
	}
	return cmd, "http://" + addr + "/mcp"
}
