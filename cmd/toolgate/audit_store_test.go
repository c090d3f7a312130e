package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/state/pgtest"
)

// TestAuditKeygenAndSignedVerify: keys from `audit keygen` sign a log;
// verify --public-key accepts it and detects a log truncated to zero,
// lines dropped from its end, and a chain rewritten from scratch.
func TestAuditKeygenAndSignedVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, "k"), filepath.Join(dir, "k.pub")
	c, stdout, stderr := auditCLI(nil)
	if code := c.main(context.Background(), []string{"audit", "keygen", "--private", priv, "--public", pub}); code != exitOK {
		t.Fatalf("keygen: %d %s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "signing_key: {file: "+priv+"}") {
		t.Errorf("keygen says %q", stdout)
	}
	if st, err := os.Stat(priv); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode: %v %v", st, err)
	}
	if code := c.main(context.Background(), []string{"audit", "keygen", "--private", priv, "--public", pub}); code != exitFail {
		t.Errorf("keygen over an existing key: exit %d, want a refusal", code)
	}
	keyPEM, _ := os.ReadFile(priv)
	key, err := audit.ParseSigningKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "audit.jsonl")
	appendEvents(t, good, audit.Options{SigningKey: key}, 5, audit.Event{Agent: "a", Decision: "deny"})
	data, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	// The attacker's rewrite: the same events re-chained without the key.
	var forged bytes.Buffer
	fl, err := audit.Open(write("forged.jsonl", nil), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := fl.Append(&audit.Event{Agent: "a", Decision: "deny"}); err != nil {
			t.Fatal(err)
		}
	}
	fl.Close()
	forgedData, _ := os.ReadFile(filepath.Join(dir, "forged.jsonl"))
	forged.Write(forgedData)
	tests := []struct {
		name string
		file string
		code int
		want string
	}{
		{"signed", good, exitOK, "signed: 1 checkpoints"},
		{"truncated to zero", write("zero.jsonl", nil), exitFail, "no checkpoint signed"},
		{"last lines dropped", write("dropped.jsonl", bytes.Join(lines[:3], nil)), exitFail, ": unsigned: "},
		{"rewritten from scratch", write("rewritten.jsonl", forged.Bytes()), exitFail, "no checkpoint signed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stdout, stderr := auditCLI(nil)
			code := c.main(context.Background(), []string{"audit", "verify", tt.file, "--public-key", pub})
			if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.want) {
				t.Errorf("exit %d, output %s%s; want %d and %q", code, stdout, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestAuditPostgresCLI: verify, export and tail read the PostgreSQL chain
// named by --dsn-env or by the workspace's gateway.state.postgres; the
// export verifies as a file.
func TestAuditPostgresCLI(t *testing.T) {
	t.Parallel()
	cl := pgtest.Need(t)
	dsn := cl.NewDatabase(t)
	p, err := state.OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	chain := p.AuditChain(audit.Options{})
	for i := range 4 {
		if err := chain.Append(&audit.Event{Agent: []string{"reader", "writer"}[i%2], Decision: "deny", Action: "mcp:call:m:t"}); err != nil {
			t.Fatal(err)
		}
	}
	chain.Close()
	p.Close()
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte("version: 1\ngateway:\n  state: {postgres: {dsn: {env: FLEET_DSN}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FLEET_DSN": dsn}
	run := func(args ...string) (int, string, string) {
		c, stdout, stderr := auditCLI(env)
		code := c.main(context.Background(), append([]string{"audit"}, args...))
		return code, stdout.String(), stderr.String()
	}
	for _, src := range [][]string{{"--dsn-env", "FLEET_DSN"}, {"-w", ws}} {
		if code, out, errOut := run(append([]string{"verify"}, src...)...); code != exitOK || !strings.HasPrefix(out, "ok: 4 events, chain intact") {
			t.Errorf("verify %v: %d %s %s", src, code, out, errOut)
		}
		if code, out, errOut := run(append([]string{"tail", "--agent", "writer"}, src...)...); code != exitOK || strings.Count(out, "\n") != 2 || !strings.Contains(out, "#4 ") {
			t.Errorf("tail %v: %d %q %s", src, code, out, errOut)
		}
	}
	code, out, errOut := run("export", "-w", ws)
	if code != exitOK {
		t.Fatalf("export: %d %s", code, errOut)
	}
	exported := filepath.Join(dir, "exported.jsonl")
	if err := os.WriteFile(exported, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run("verify", exported); code != exitOK || !strings.HasPrefix(out, "ok: 4 events") {
		t.Errorf("the export verified as a file: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := run("verify", "--dsn-env", "NOT_SET"); code != exitUsage || !strings.Contains(errOut, "NOT_SET") {
		t.Errorf("unset --dsn-env: %d %s", code, errOut)
	}
}
