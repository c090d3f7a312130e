package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// jobIDOf reads the job id from a background start's structured result.
func jobIDOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	v := structured(t, res)
	id, _ := v["job_id"].(string)
	if !strings.HasPrefix(id, "job-") {
		t.Fatalf("no job id in %v", v)
	}
	return id
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return v
}

// waitJob polls job-status until done holds, and returns the last status.
func waitJob(t *testing.T, cl *client.Client, id string, done func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		text, isErr, res, err := call(t, cl, "job-status", map[string]any{"job_id": id})
		if err != nil || isErr {
			t.Fatalf("job-status: %v %s", err, text)
		}
		v := structured(t, res)
		if done(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: condition not reached; last status %v", id, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pidAlive reports whether pid runs (a zombie awaiting its reaper counts
// as gone).
func pidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func readPIDFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for pidAlive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d of the job's group is still running", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

const jobsWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
command_packs:
  - id: work
    permission: open
    timeout: 2m
    commands:
      - id: long
        description: A long job that prints lines and holds its process group.
        argv: [JOBBER, "{dir}", "{lines}"]
        inputs:
          type: object
          properties:
            dir: {type: string}
            lines: {type: integer, minimum: 0}
          required: [dir, lines]
          additionalProperties: false
        effects: write
        background: true
      - id: quick
        description: A foreground command on the same pack.
        argv: [JOBBER, --version]
        inputs: {type: object}
        effects: read
agents:
  - id: alice
    token: {env: ALICE_TOKEN}
    grants: [tool:work:long, tool:work:quick]
  - id: bob
    token: {env: BOB_TOKEN}
    grants: [tool:work:long, tool:work:quick]
  - id: carol
    token: {env: CAROL_TOKEN}
    grants: [tool:work:quick]
`

type jobsEnv struct {
	dir     string
	d       *daemon
	clients map[string]*client.Client
}

func startJobs(t *testing.T) *jobsEnv {
	t.Helper()
	standins := buildStandins(t)
	dir := t.TempDir()
	writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(jobsWorkspace, "JOBBER", filepath.Join(standins, "jobber")))
	env := []string{"ALICE_TOKEN=alice-token-0123456789abcdef", "BOB_TOKEN=bob-token-0123456789abcdef", "CAROL_TOKEN=carol-token-0123456789abcdef"}
	e := &jobsEnv{dir: dir, d: startDaemon(t, env, "-w", filepath.Join(dir, "toolgate.yaml")), clients: map[string]*client.Client{}}
	for _, a := range []string{"alice", "bob", "carol"} {
		e.clients[a] = mcpHTTP(t, e.d.base+"/mcp/work", a+"-token-0123456789abcdef")
	}
	return e
}

// startLong starts a long job for agent with its pid files under a fresh
// directory; it returns the job id and the leader and child pids.
func (e *jobsEnv) startLong(t *testing.T, agent string, lines int) (id string, leader, child int) {
	t.Helper()
	pids := t.TempDir()
	began := time.Now()
	text, isErr, res, err := call(t, e.clients[agent], "long", map[string]any{"dir": pids, "lines": lines})
	if err != nil || isErr {
		t.Fatalf("long: %v %s", err, text)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("starting a background job took %v; it should return at once", took)
	}
	id = jobIDOf(t, res)
	if !strings.Contains(text, "Started background job "+id) {
		t.Errorf("start text: %s", text)
	}
	return id, readPIDFile(t, filepath.Join(pids, "leader.pid")), readPIDFile(t, filepath.Join(pids, "child.pid"))
}

func jobAuditEvents(t *testing.T, dir string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

// findEvent returns the first audit event with action and decision whose
// reason contains reason.
func findEvent(events []map[string]any, action, decision, reason string) map[string]any {
	for _, ev := range events {
		if ev["action"] == action && ev["decision"] == decision && strings.Contains(fmt.Sprint(ev["reason"]), reason) {
			return ev
		}
	}
	return nil
}

// TestJobLifecycle: start returns a job id at once; status shows it
// running; logs page through the output with offsets; another agent can
// neither see nor cancel it; cancel kills the whole process group (the
// job ignores SIGTERM, so this takes the SIGKILL); start, cancel and end
// are audited.
func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	e := startJobs(t)
	alice, bob, carol := e.clients["alice"], e.clients["bob"], e.clients["carol"]
	if names := toolNames(t, alice); !slices.Contains(names, "job-status") || !slices.Contains(names, "job-logs") || !slices.Contains(names, "job-cancel") {
		t.Errorf("alice's tools = %q, want the job tools", names)
	}
	if names := toolNames(t, carol); slices.Contains(names, "job-status") {
		t.Errorf("carol holds no background command, yet sees job tools: %q", names)
	}

	const lines = 3000
	var want strings.Builder
	for i := range lines {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	id, leader, child := e.startLong(t, "alice", lines)
	st := waitJob(t, alice, id, func(v map[string]any) bool { return v["stdout_bytes"] == float64(want.Len()) })
	if st["state"] != "running" || st["command"] != "long" {
		t.Fatalf("status = %v, want running", st)
	}

	// Page through stdout 10000 bytes at a time.
	var got strings.Builder
	offset, pages := 0.0, 0
	for {
		_, isErr, res, err := call(t, alice, "job-logs", map[string]any{"job_id": id, "offset": offset, "limit": 10000})
		if err != nil || isErr {
			t.Fatalf("job-logs: %v", err)
		}
		v := structured(t, res)
		if v["offset"] != offset {
			t.Fatalf("page offset %v, asked %v", v["offset"], offset)
		}
		got.WriteString(v["data"].(string))
		pages++
		if v["next_offset"] == offset {
			break
		}
		offset = v["next_offset"].(float64)
	}
	if got.String() != want.String() || pages != 4 {
		t.Errorf("paged stdout: %d bytes in %d pages, want %d bytes in 4 (3 full, 1 empty)", got.Len(), pages, want.Len())
	}
	errText, _, _, _ := call(t, alice, "job-logs", map[string]any{"job_id": id, "stream": "stderr"})
	if !strings.HasPrefix(errText, "jobber started\n") || !strings.Contains(errText, "next_offset") {
		t.Errorf("stderr page: %s", errText)
	}

	// Bob and carol cannot see or touch alice's job.
	for _, tc := range []struct {
		cl   *client.Client
		tool string
	}{{bob, "job-status"}, {bob, "job-logs"}, {bob, "job-cancel"}} {
		text, isErr, _, err := call(t, tc.cl, tc.tool, map[string]any{"job_id": id})
		if err != nil || !isErr || !strings.Contains(text, "no such job") {
			t.Errorf("bob %s on alice's job: isError %v err %v: %s", tc.tool, isErr, err, text)
		}
	}
	if text, _, _, _ := call(t, bob, "job-status", map[string]any{}); text != "no background jobs" {
		t.Errorf("bob's job list: %s", text)
	}
	if text, isErr, _, err := call(t, carol, "job-cancel", map[string]any{"job_id": id}); err != nil || !isErr || !strings.HasPrefix(text, "DENIED: unknown tool") {
		t.Errorf("carol called job-cancel, which she is not shown: %q (err %v), want DENIED: unknown tool", text, err)
	}
	if !pidAlive(leader) || !pidAlive(child) {
		t.Fatalf("the job died before alice cancelled it")
	}
	if text, _, _, _ := call(t, alice, "job-status", map[string]any{}); !strings.Contains(text, id+" work:long running") {
		t.Errorf("alice's job list: %s", text)
	}

	text, isErr, res, err := call(t, alice, "job-cancel", map[string]any{"job_id": id})
	if err != nil || isErr {
		t.Fatalf("job-cancel: %v %s", err, text)
	}
	if v := structured(t, res); v["state"] != "cancelled" {
		t.Errorf("after cancel: %v", v)
	}
	waitGone(t, leader, child)
	final := waitJob(t, alice, id, func(v map[string]any) bool { return v["state"] != "running" })
	if final["state"] != "cancelled" || final["exit"] != float64(-1) {
		t.Errorf("final status %v", final)
	}

	events := jobAuditEvents(t, e.dir)
	if findEvent(events, "command:call:work:long", "completed", "started background job "+id) == nil {
		t.Errorf("no audited start of %s", id)
	}
	if ev := findEvent(events, "command:job-cancel:work:long", "allow", id); ev == nil || ev["agent"] != "alice" {
		t.Errorf("no audited cancel by alice: %v", ev)
	}
	if ev := findEvent(events, "command:call:work:job-cancel", "deny", "no such job"); ev == nil || ev["agent"] != "bob" {
		t.Errorf("bob's refused cancel not audited: %v", ev)
	}
	end := findEvent(events, "command:job-end:work:long", "cancelled", id)
	if end == nil || end["exit"] != float64(-1) || end["output_bytes"] != float64(want.Len()) || !strings.Contains(fmt.Sprint(end["error"]), "killed by signal killed") {
		t.Errorf("audited end = %v", end)
	}
	if r := toolgate(t, e.dir, nil, "audit", "verify", "audit.jsonl"); r.code != 0 {
		t.Errorf("audit verify: %s%s", r.stdout, r.stderr)
	}
}

// TestJobsStopWithGateway: when the gateway stops, a running job's whole
// process group is terminated and its end is audited as "stopped" before
// the audit log closes.
func TestJobsStopWithGateway(t *testing.T) {
	t.Parallel()
	e := startJobs(t)
	id, leader, child := e.startLong(t, "alice", 10)
	if err := e.d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("gateway exit: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the gateway did not stop within 30s")
	}
	waitGone(t, leader, child)
	end := findEvent(jobAuditEvents(t, e.dir), "command:job-end:work:long", "stopped", id)
	if end == nil || !strings.Contains(fmt.Sprint(end["error"]), "the gateway stopped") {
		t.Errorf("no audited stop of %s: %v", id, end)
	}
}
