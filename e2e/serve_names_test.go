package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesMisspeltNames: against the built binary and a pinned
// downstream, `serve` refuses what `check` refuses. A misspelt grant stops
// it from starting, the did-you-mean at the grant's line:column on stderr;
// a running daemon given a file with a misspelt effects key refuses the
// reload (status and log say why, at the key's line:column) and keeps
// deciding with the revision in force; the fixed file then loads.
func TestServeRefusesMisspeltNames(t *testing.T) {
	t.Parallel()
	down := newDownstream(t, "Greets someone.")
	dir := t.TempDir()
	// observeWorkspace: down (greet, ping) proxied, reader granted greet.
	good := strings.Replace(observeWorkspace, "DOWNURL", down.URL, 1)
	ws := writeFile(t, dir, "toolgate.yaml", good)
	if r := toolgate(t, dir, nil, "pin", "-w", ws); r.code != 0 {
		t.Fatalf("toolgate pin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	const readerToken = "reader-tok-0123456789abcdef"
	env := []string{"READER_TOKEN=" + readerToken, "ADMIN_TOKEN=" + adminToken}

	// (1) A misspelt grant: check and serve refuse it alike.
	writeFile(t, dir, "toolgate.yaml", strings.Replace(good, "grants: [tool:down:greet]", "grants: [tool:down:gret]", 1))
	const grantErr = `toolgate.yaml:12:14: agent "reader" grant "tool:down:gret" names tool "gret", which server "down" does not list (toolgate.lock) (did you mean "greet"?)`
	check := toolgate(t, dir, env, "check", "--offline", "-w", ws)
	serve := serveRefused(t, env, "-w", ws)
	for name, r := range map[string]result{"check --offline": check, "serve": serve} {
		if r.code == 0 || !strings.Contains(r.stderr, filepath.Join(dir, grantErr)) {
			t.Fatalf("%s with a misspelt grant: exit %d, want the error\n  %s\n%s%s", name, r.code, grantErr, r.stdout, r.stderr)
		}
	}

	// (2) A running daemon refuses a reload with a misspelt effects key.
	writeFile(t, dir, "toolgate.yaml", good)
	d, logs := startLoggedDaemon(t, env, "-w", ws)
	s := rawConnect(t, d.base+"/mcp/down", readerToken)
	if text, isErr := s.callText("greet", map[string]any{"name": "ada"}); isErr || text != "hello ada" {
		t.Fatalf("greet before the reload: %q %v", text, isErr)
	}
	inForce := statusOf(t, d).Workspace.Revision
	saveAs(t, ws, strings.Replace(good, "{greet: read, ping: read}", "{greet: read, pnig: read}", 1))
	const effectsErr = `toolgate.yaml:8:28: server "down" effects names tool "pnig", which server "down" does not list (toolgate.lock) (did you mean "ping"?)`
	waitFor(t, 20*time.Second, "the misspelt file to be refused", func() bool { return statusOf(t, d).Reload.Error != "" })
	st := statusOf(t, d)
	if st.Workspace.Revision != inForce || !strings.Contains(st.Reload.Error, effectsErr) {
		t.Fatalf("status after the misspelt file: %+v", st)
	}
	rec, ok := logs.find("workspace reload refused; the previous revision stays in force")
	if errText, _ := rec["err"].(string); !ok || !strings.Contains(errText, effectsErr) {
		t.Fatalf("no log line saying why the reload was refused: %v", rec)
	}
	if text, isErr := s.callText("greet", map[string]any{"name": "bob"}); isErr || text != "hello bob" {
		t.Fatalf("greet under the revision kept in force: %q %v", text, isErr)
	}
	if text, isErr := s.callText("ping", map[string]any{}); !isErr || !strings.HasPrefix(text, "DENIED: ") {
		t.Fatalf("ping was never granted, yet: %q %v", text, isErr)
	}

	// (3) The fixed file (which also grants ping) loads.
	fixed := saveAs(t, ws, strings.Replace(good, "grants: [tool:down:greet]", "grants: [tool:down:greet, tool:down:ping]", 1))
	waitFor(t, 20*time.Second, "the fixed file to load", func() bool {
		st := statusOf(t, d)
		return st.Workspace.Revision == fixed && st.Reload.Error == ""
	})
	if text, isErr := s.callText("ping", map[string]any{}); isErr || text != "pong" {
		t.Fatalf("ping after the fixed reload: %q %v", text, isErr)
	}
}

// saveAs saves data to path as an editor does (a new file renamed into
// place) and returns its revision.
func saveAs(t *testing.T, path, data string) string {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return sha256Hex(data)
}

// serveRefused runs `toolgate serve` and returns how it ended, failing the
// test (and stopping it) if it starts listening instead of refusing.
func serveRefused(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--log-format", "json", "serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	listening := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		errb.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"msg":"listening"`) {
			listening = true
			_ = cmd.Process.Kill()
		}
	}
	err = cmd.Wait()
	if listening {
		t.Fatalf("serve started instead of refusing:\n%s", errb.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}
