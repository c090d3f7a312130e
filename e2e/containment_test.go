package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// The containment attacks against the built binary: a pack call, a stdio
// server and a background job each leave processes behind by every means a
// command has (testdata/escaper: setsid, a double fork, SIGTERM ignored, a
// process group of its own, a fork loop) and kill their own parent — the
// process toolgate puts above them — with SIGKILL. After the call (the
// session, the job) and again after the gateway stops, no process that
// carries the call's marker may run, and the file the survivors append to
// may not grow. Each runs in both containment modes: a cgroup per call,
// and a session per call with the gateway as subreaper (the fallback where
// no cgroup can be made, forced with TOOLGATE_CONTAINMENT=session).

var escaperBuild builtOnce

// techniques are the escaper's ways out (testdata/escaper).
var techniques = []string{"supervisor-killed", "setsid", "double-fork", "ignore-term", "setpgid", "fork-loop"}

// containEnv is one gateway whose packs and stdio servers run the escaper.
type containEnv struct {
	mode  string
	dir   string
	d     *daemon
	files map[string]string // what -> marker file
	sizes map[string]int64  // marker file -> its size when its call ended
}

// startContain writes the workspace (a pack command and a background job
// running the escaper, and one stdio server per technique) and starts the
// gateway in mode.
func startContain(t *testing.T, mode string) *containEnv {
	t.Helper()
	esc := escaperBuild.binary(t, "escaper", "./testdata/escaper")
	conf := conformanceServer(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &containEnv{mode: mode, dir: dir, files: map[string]string{}, sizes: map[string]int64{}}
	var servers, grants strings.Builder
	for _, tech := range techniques {
		f := e.file("stdio-" + tech)
		fmt.Fprintf(&servers, "  - id: esc-%s\n    command: [%s, %s, %s, %s, -stdio]\n    effects: {echo: read}\n", tech, esc, tech, f, conf)
		fmt.Fprintf(&grants, "      - tool:esc-%s:echo\n", tech)
	}
	ws := `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
command_packs:
  - id: escape
    timeout: 30s
    commands:
      - id: run
        argv: [` + esc + `, "{technique}", "{file}"]
        inputs: &in {type: object, properties: {technique: {type: string, maxLength: 64}, file: {type: string, maxLength: 4096}}, required: [technique, file], additionalProperties: false}
        effects: read
      - id: start
        argv: [` + esc + `, "{technique}", "{file}"]
        inputs: *in
        effects: read
        background: true
mcp_servers:
` + servers.String() + `agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants:
      - pack:escape
` + grants.String()
	writeFile(t, dir, "toolgate.yaml", ws)
	e.d = startDaemon(t, []string{"DEV_TOKEN=dev-token-0123456789abcdef", "TOOLGATE_CONTAINMENT=" + mode}, "-w", filepath.Join(dir, "toolgate.yaml"))
	t.Cleanup(e.killLeftovers)
	return e
}

// file is the marker file of one attack (created by its survivors).
func (e *containEnv) file(what string) string {
	f := filepath.Join(e.dir, "marks", what)
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		panic(err)
	}
	e.files[what] = f
	return f
}

// marked lists the running processes whose argv holds file. A process
// runs until its last thread is gone, even when its leader already shows
// as a zombie (supervisor.Stat.Running).
func marked(file string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		if st, ok := supervisor.ReadStat(pid); !ok || !st.Running() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(file)) {
			out = append(out, pid)
		}
	}
	return out
}

func fileSize(file string) int64 {
	fi, err := os.Stat(file)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// ended checks, right after what's call ended, that nothing of it runs,
// and notes how much its survivors wrote.
func (e *containEnv) ended(t *testing.T, what string) {
	t.Helper()
	f := e.files[what]
	left := marked(f)
	t.Logf("%s: processes left after the call: %d", what, len(left))
	if len(left) > 0 {
		t.Errorf("%s: %d processes outlived the call: %v", what, len(left), left)
	}
	e.sizes[f] = fileSize(f)
	// The attack ran: its survivor wrote. (In session mode a double-forked
	// survivor is orphaned at once and may be killed before it can.)
	if e.sizes[f] == 0 && !(e.mode == "session" && strings.HasSuffix(what, "double-fork")) {
		t.Errorf("%s: no survivor ever wrote to %s: the attack did not run", what, f)
	}
}

// stopped stops the gateway and checks every attack again: nothing runs,
// and no marker file grew since its call ended.
func (e *containEnv) stopped(t *testing.T) {
	t.Helper()
	stopDaemon(t, e.d, 30*time.Second)
	for what, f := range e.files {
		if _, ok := e.sizes[f]; !ok {
			continue
		}
		left := marked(f)
		grew := fileSize(f) - e.sizes[f]
		t.Logf("%s: after the gateway stopped: processes left %d, bytes written after the call %d", what, len(left), grew)
		if len(left) > 0 || grew > 0 {
			t.Errorf("%s: after the gateway stopped, %d processes run and %d bytes were written after the call", what, len(left), grew)
		}
	}
}

// killLeftovers kills what a failed test left (a fork loop refills, so
// several rounds).
func (e *containEnv) killLeftovers() {
	for range 50 {
		n := 0
		for _, f := range e.files {
			for _, pid := range marked(f) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				n++
			}
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// eachContainment runs body against a gateway in each mode.
func eachContainment(t *testing.T, body func(t *testing.T, e *containEnv)) {
	for _, mode := range []string{"cgroup", "session"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			body(t, startContain(t, mode))
		})
	}
}

// TestContainPackCall: a pack call whose command kills its parent and
// leaves survivors fails, and leaves nothing running.
func TestContainPackCall(t *testing.T) {
	t.Parallel()
	eachContainment(t, func(t *testing.T, e *containEnv) {
		cl := mcpHTTP(t, e.d.base+"/mcp/escape", "dev-token-0123456789abcdef")
		for _, tech := range techniques {
			what := "call-" + tech
			text, isErr, _, err := call(t, cl, "run", map[string]any{"technique": tech, "file": e.file(what)})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			e.ended(t, what)
			t.Logf("%s: the call answered isError=%v: %s", what, isErr, firstLine(text))
			if !isErr {
				t.Errorf("%s: a command that killed its parent succeeded: %s", what, text)
			}
		}
		e.stopped(t)
	})
}

// TestContainStdioSession: a stdio server that kills its parent and
// leaves survivors has nothing left once its session ends.
func TestContainStdioSession(t *testing.T) {
	t.Parallel()
	eachContainment(t, func(t *testing.T, e *containEnv) {
		for _, tech := range techniques {
			what := "stdio-" + tech
			// The server may already be gone (it kills its parent as it
			// starts, and toolgate's probe of its eras starts it too): the
			// answers do not matter, only what is left running.
			openAndEnd(t, e.d.base+"/mcp/esc-"+tech, "dev-token-0123456789abcdef")
			f := e.files[what]
			// The DELETE answers at once and the tree stops behind it.
			waitFor(t, 15*time.Second, what+": its processes to stop after the session ended", func() bool { return len(marked(f)) == 0 })
			e.ended(t, what)
		}
		e.stopped(t)
	})
}

// TestContainBackgroundJob: a background job that kills its parent and
// leaves survivors ends failed, audited, with nothing left running.
func TestContainBackgroundJob(t *testing.T) {
	t.Parallel()
	eachContainment(t, func(t *testing.T, e *containEnv) {
		cl := mcpHTTP(t, e.d.base+"/mcp/escape", "dev-token-0123456789abcdef")
		ids := map[string]string{}
		for _, tech := range techniques {
			what := "job-" + tech
			text, isErr, res, err := call(t, cl, "start", map[string]any{"technique": tech, "file": e.file(what)})
			if err != nil || isErr {
				t.Fatalf("%s: start: %v %s", what, err, text)
			}
			id := jobIDOf(t, res)
			ids[what] = id
			st := waitJob(t, cl, id, func(v map[string]any) bool { return v["state"] != "running" })
			e.ended(t, what)
			t.Logf("%s: job ended %v: %v", what, st["state"], st["error"])
			if st["state"] != "failed" {
				t.Errorf("%s: job state %v, want failed", what, st["state"])
			}
		}
		e.stopped(t)
		events := jobAuditEvents(t, e.dir)
		for what, id := range ids {
			if findEvent(events, "command:job-end:escape:start", "failed", id) == nil {
				t.Errorf("%s: no audited end (failed) for job %s", what, id)
			}
		}
	})
}

// openAndEnd opens a session (initialize, tools/list) and ends it
// (DELETE), whatever the server answers: a hostile server may fail any of
// these.
func openAndEnd(t *testing.T, url, token string) {
	t.Helper()
	send := func(method, sid string, body string) string {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("Mcp-Session-Id")
	}
	sid := send("POST", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	if sid == "" {
		return
	}
	send("POST", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send("POST", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	send("DELETE", sid, "")
}
