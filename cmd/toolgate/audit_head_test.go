package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/audit"
)

// TestAuditVerifyHeadCLI: `audit verify --head SEQ:HASH` refuses, without
// any key, the cuts and rewrites a plain verify passes: the last lines
// dropped, the file truncated to nothing, the chain rewritten from scratch.
func TestAuditVerifyHeadCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	anchorHash := writeAuditLog(t, good, 4)
	appendEvents(t, good, audit.Options{}, 3, audit.Event{Agent: "reader", Decision: "deny"})
	head := "4:" + anchorHash
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dropped := write("dropped.jsonl", bytes.Join(lines[:3], nil))
	zero := write("zero.jsonl", nil)
	// Rewritten: as many events and more, other ones, chained anew.
	forged := filepath.Join(dir, "forged.jsonl")
	appendEvents(t, forged, audit.Options{}, 9, audit.Event{Agent: "reader", Decision: "allow", Reason: "nothing to see"})
	tests := []struct {
		name    string
		args    []string
		code    int
		outIn   []string
		errIn   []string
		plainOK bool // a verify without --head passes it
	}{
		{"intact", []string{good, "--head", head}, exitOK, []string{"ok: 7 events", "anchored: the chain holds seq 4 with the anchored hash; the 3 events after it are not covered", "not signed: events after the anchored head"}, nil, true},
		{"last lines dropped", []string{dropped, "--head", head}, exitFail, nil, []string{"anchored head: the chain ends at seq 3, before the anchored head seq 4"}, true},
		{"truncated to zero", []string{zero, "--head", head}, exitFail, nil, []string{"the chain ends at seq 0, before the anchored head seq 4"}, true},
		{"rewritten from scratch", []string{forged, "--head", head}, exitFail, nil, []string{"line 4 (seq 4): anchored head: seq 4 has hash", "the chain was rewritten"}, true},
		{"bad head", []string{good, "--head", "4"}, exitUsage, nil, []string{"--head: \"4\" is not an anchored head: write SEQ:HASH"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, stdout, stderr := auditCLI(nil)
			code := c.main(context.Background(), append([]string{"audit", "verify"}, tt.args...))
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			for _, want := range tt.outIn {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tt.errIn {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if tt.plainOK {
				c, stdout, _ := auditCLI(nil)
				if code := c.main(context.Background(), []string{"audit", "verify", tt.args[0]}); code != exitOK || !strings.Contains(stdout.String(), "not proven: without a signing key this check cannot detect a truncated or rewritten tail") {
					t.Errorf("plain verify of %s: exit %d, %s (it passes, and must say what it cannot prove)", tt.args[0], code, stdout)
				}
			}
		})
	}
}

// TestCheckWarnsUnsignedAudit: `toolgate check` warns of the default, an
// audit without gateway.audit.signing_key, at the audit's declaration,
// with the command and the config line that fix it; not once it is set.
func TestCheckWarnsUnsignedAudit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unsigned := filepath.Join(dir, "unsigned.yaml")
	if err := os.WriteFile(unsigned, []byte("version: 1\ngateway:\n  audit: {path: a.jsonl}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, stderr := auditCLI(nil)
	if code := c.main(context.Background(), []string{"check", "-w", unsigned}); code != exitOK {
		t.Fatalf("check: %d %s", code, stderr)
	}
	for _, want := range []string{unsigned + ":3:", "warning: gateway.audit.signing_key is not set: a truncated or rewritten audit tail cannot be detected",
		"toolgate audit keygen --private " + filepath.Join(dir, "audit-signing.key"), "signing_key: {file: audit-signing.key}"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	signed := filepath.Join(dir, "signed.yaml")
	if err := os.WriteFile(signed, []byte("version: 1\ngateway:\n  audit: {path: a.jsonl, signing_key: {file: audit-signing.key}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, stderr = auditCLI(nil)
	if code := c.main(context.Background(), []string{"check", "-w", signed}); code != exitOK || strings.Contains(stderr.String(), "signing_key is not set") {
		t.Errorf("check of a signed audit: %d %s", code, stderr)
	}
}

// appendEvents appends n copies of ev to the log at path, opened with
// opts, and closes it.
func appendEvents(t *testing.T, path string, opts audit.Options, n int, ev audit.Event) {
	t.Helper()
	l, err := audit.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		e := ev
		if err := l.Append(&e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
