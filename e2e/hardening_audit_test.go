package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The attacks of issue 15 on the audit trail, against the built binary: a
// line torn by a crash must not keep the gateway from starting, and with
// gateway.audit.signing_key the chain cannot be shortened, emptied or
// rewritten with recomputed hashes without `toolgate audit verify
// --public-key` saying so.

// auditWorkspace declares one read command (so calls are decided and
// audited) and, when key is set, the audit signing key file.
func auditWorkspace(t *testing.T, dir, key string) string {
	t.Helper()
	signing := ""
	if key != "" {
		signing = ", signing_key: {file: " + key + "}"
	}
	return writeFile(t, dir, "toolgate.yaml", fmt.Sprintf(`version: 1
gateway:
  audit: {path: audit.jsonl, fsync: always%s}
command_packs:
  - id: echo
    commands:
      - id: say
        description: Prints its argument.
        argv: [%s, "{text}"]
        inputs: {type: object, properties: {text: {type: string, maxLength: 64}}, required: [text], additionalProperties: false}
        effects: read
      - id: secret
        description: Granted to nobody.
        argv: [%s, secret]
        inputs: {type: object, additionalProperties: false}
        effects: read
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [tool:echo:say]
`, signing, argvEcho, argvEcho))
}

// TestAuditTornLine: the last line cut in half, as a crash mid-append
// leaves it: the gateway starts by itself, the torn bytes are moved to
// audit.jsonl.torn, the recovery is an event, and the chain verifies.
func TestAuditTornLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := auditWorkspace(t, dir, "")
	log := filepath.Join(dir, "audit.jsonl")
	d := startDaemon(t, hardenEnv, "-w", ws)
	cl := mcpHTTP(t, d.base+"/mcp/echo", hardenToken)
	for i := range 3 {
		if text, isErr, _, err := call(t, cl, "say", map[string]any{"text": fmt.Sprint("before-", i)}); err != nil || isErr {
			t.Fatalf("say: %v %s", err, text)
		}
	}
	stopDaemon(t, d, 20*time.Second)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-1]
	cut := int64(len(data) - len(last)/2 - 1)
	torn := string(data[len(data)-len(last)-1 : cut]) // what the crash left of the line
	if err := os.Truncate(log, cut); err != nil {
		t.Fatal(err)
	}
	if r := toolgate(t, dir, nil, "audit", "verify", log); r.code == 0 {
		t.Fatalf("verify passed on a torn log: the test proves nothing\n%s", r.stdout)
	}

	start := time.Now()
	d = startDaemon(t, hardenEnv, "-w", ws)
	t.Logf("torn audit line (%d bytes): the gateway started by itself in %s", len(torn), time.Since(start).Round(time.Millisecond))
	cl = mcpHTTP(t, d.base+"/mcp/echo", hardenToken)
	if text, isErr, _, err := call(t, cl, "say", map[string]any{"text": "after"}); err != nil || isErr {
		t.Fatalf("say after the recovery: %v %s", err, text)
	}
	stopDaemon(t, d, 20*time.Second)
	aside, err := os.ReadFile(log + ".torn")
	if err != nil || strings.TrimSuffix(string(aside), "\n") != torn {
		t.Errorf("audit.jsonl.torn = %q (%v), want the torn bytes %q", aside, err, torn)
	}
	var recovered *auditEvent
	for _, ev := range readAudit(t, log) {
		if ev.Decision == "recovered" {
			recovered = &ev
		}
	}
	if recovered == nil || recovered.Action != "audit:recover" || !strings.Contains(recovered.raw, ".torn") {
		t.Errorf("no recovery event naming the .torn file: %+v", recovered)
	}
	if r := toolgate(t, dir, nil, "audit", "verify", log); r.code != 0 {
		t.Errorf("verify after the recovery: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAuditSignedTamper: with a signing key made by `toolgate audit
// keygen`, each way of erasing the trail that a plain hash chain cannot
// see — dropping the last lines, truncating to zero, rewriting the file
// with recomputed hashes (with or without its checkpoints) — fails
// `audit verify --public-key`; the untouched log passes.
func TestAuditSignedTamper(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := toolgate(t, dir, nil, "audit", "keygen", "--private", "signing.key", "--public", "signing.pub"); r.code != 0 {
		t.Fatalf("keygen: %d %s", r.code, r.stderr)
	}
	if r := toolgate(t, dir, nil, "audit", "keygen", "--private", "other.key", "--public", "other.pub"); r.code != 0 {
		t.Fatalf("keygen: %d %s", r.code, r.stderr)
	}
	ws := auditWorkspace(t, dir, filepath.Join(dir, "signing.key"))
	log := filepath.Join(dir, "audit.jsonl")
	d := startDaemon(t, hardenEnv, "-w", ws)
	cl := mcpHTTP(t, d.base+"/mcp/echo", hardenToken)
	// 1,000 and more events, so the log holds a periodic checkpoint
	// besides the closing one: refused calls are one event each.
	for i := range 1010 {
		if _, isErr, _, err := call(t, cl, "secret", map[string]any{}); err != nil || !isErr {
			t.Fatalf("secret %d: %v", i, err)
		}
	}
	for i := range 3 {
		if text, isErr, _, err := call(t, cl, "say", map[string]any{"text": fmt.Sprint("allowed-", i)}); err != nil || isErr {
			t.Fatalf("say: %v %s", err, text)
		}
	}
	stopDaemon(t, d, 20*time.Second)
	orig, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(orig), "\n"), "\n")
	checkpoints := strings.Count(string(orig), `"decision":"checkpoint"`)
	if checkpoints < 2 {
		t.Fatalf("%d checkpoints in %d lines; want a periodic and a closing one", checkpoints, len(lines))
	}
	verify := func(file string, args ...string) result {
		return toolgate(t, dir, nil, append([]string{"audit", "verify", file}, args...)...)
	}
	if r := verify(log, "--public-key", "signing.pub"); r.code != 0 || !strings.Contains(r.stdout, "signed: ") {
		t.Fatalf("the untouched log: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A deny turned into an allow (or any edit), then every hash after it
	// recomputed: a consistent chain, but not the one the key signed.
	edit := func(ls []string) []string {
		out := append([]string(nil), ls...)
		for i, l := range out {
			if strings.Contains(l, `"decision":"deny"`) && i > 10 {
				out[i] = strings.Replace(l, `"decision":"deny"`, `"decision":"allow"`, 1)
				break
			}
		}
		return out
	}
	withoutCheckpoints := func(ls []string) []string {
		var out []string
		for _, l := range ls {
			if !strings.Contains(l, `"decision":"checkpoint"`) {
				out = append(out, l)
			}
		}
		return out
	}
	tampered := []struct {
		name  string
		lines []string
		// plainPasses: a chain check without the key is fooled, which
		// is the attack the key is for (a checkpoint left naming a
		// replaced line is caught without the key).
		plainPasses bool
	}{
		{name: "last line dropped (the closing checkpoint)", lines: lines[:len(lines)-1], plainPasses: true},
		{name: "last 5 lines dropped", lines: lines[:len(lines)-5], plainPasses: true},
		{name: "truncated to zero", lines: nil, plainPasses: true},
		{name: "an event edited, hashes recomputed", lines: rechain(edit(lines))},
		{name: "an event removed, hashes and seqs recomputed", lines: rechain(append(append([]string(nil), lines[:20]...), lines[21:]...))},
		{name: "rewritten without its checkpoints", lines: rechain(withoutCheckpoints(lines)), plainPasses: true},
		{name: "rewritten, checkpoints pointed at the new hashes", lines: repointCheckpoints(rechain(edit(lines))), plainPasses: true},
	}
	for _, c := range tampered {
		f := filepath.Join(t.TempDir(), "audit.jsonl")
		if err := os.WriteFile(f, []byte(strings.Join(c.lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		plain := verify(f)
		signed := verify(f, "--public-key", "signing.pub")
		t.Logf("signed audit, %s (%d of %d lines): plain verify exit %d; --public-key exit %d: %s",
			c.name, len(c.lines), len(lines), plain.code, signed.code, firstLine(strings.TrimSpace(signed.stderr)))
		if signed.code == 0 {
			t.Errorf("%s: audit verify --public-key passed\n%s", c.name, signed.stdout)
		}
		if c.plainPasses && plain.code != 0 {
			t.Errorf("%s: the plain chain check already fails, so the tamper is not the one a recomputing attacker makes:\n%s", c.name, plain.stderr)
		}
	}
	// The limit: a log cut back to exactly a checkpoint is a genuine
	// earlier state of the log, signed, and verifies; only the seq of the
	// last checkpoint, kept elsewhere, tells it from the whole log.
	f := filepath.Join(t.TempDir(), "audit.jsonl")
	kept := upToFirstCheckpoint(lines)
	if err := os.WriteFile(f, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	r := verify(f, "--public-key", "signing.pub")
	t.Logf("signed audit, limit: cut back to the periodic checkpoint (%d of %d lines): --public-key exit %d: %s", len(kept), len(lines), r.code, firstLine(r.stdout))
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("through seq %d", len(kept)-1)) {
		t.Errorf("a log cut back to a checkpoint: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The right chain, the wrong key.
	if r := verify(log, "--public-key", "other.pub"); r.code == 0 {
		t.Errorf("verify with another key passed:\n%s", r.stdout)
	} else {
		t.Logf("signed audit, another key: exit %d: %s", r.code, firstLine(strings.TrimSpace(r.stderr)))
	}
	// A gateway restarted on the signed log goes on signing it.
	d = startDaemon(t, hardenEnv, "-w", ws)
	cl = mcpHTTP(t, d.base+"/mcp/echo", hardenToken)
	if text, isErr, _, err := call(t, cl, "say", map[string]any{"text": "restarted"}); err != nil || isErr {
		t.Fatalf("say: %v %s", err, text)
	}
	stopDaemon(t, d, 20*time.Second)
	if r := verify(log, "--public-key", "signing.pub"); r.code != 0 {
		t.Errorf("after a restart: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

var (
	prevField = regexp.MustCompile(`"prev":"[0-9a-f]*"`)
	seqField  = regexp.MustCompile(`^\{"seq":\d+`)
	hashTail  = regexp.MustCompile(`,"hash":"[0-9a-f]{64}"\}\n?$`)
)

// rechain renumbers lines from 1 and recomputes every prev and hash, as an
// attacker holding the file (and this format, which is public) would: the
// result is a chain that verifies without a key. An audit line's hash is
// the SHA-256 of its bytes up to the hash field, closed with "}".
func rechain(lines []string) []string {
	out := make([]string, 0, len(lines))
	prev := ""
	for i, l := range lines {
		body := hashTail.ReplaceAllString(l, "")
		body = seqField.ReplaceAllString(body, fmt.Sprintf(`{"seq":%d`, i+1))
		body = prevField.ReplaceAllString(body, `"prev":"`+prev+`"`)
		sum := sha256.Sum256([]byte(body + "}"))
		prev = hex.EncodeToString(sum[:])
		out = append(out, body+`,"hash":"`+prev+`"}`+"\n")
	}
	return out
}

var checkpointOf = regexp.MustCompile(`"checkpoint":\{"seq":\d+,"hash":"[0-9a-f]{64}"`)

// repointCheckpoints makes each checkpoint name the seq and hash of the
// line before it in the rewritten chain (its signature, which the attacker
// cannot make, stays the old one), then rechains.
func repointCheckpoints(lines []string) []string {
	out := append([]string(nil), lines...)
	for i := 1; i < len(out); i++ {
		if !strings.Contains(out[i], `"decision":"checkpoint"`) {
			continue
		}
		m := regexp.MustCompile(`"hash":"([0-9a-f]{64})"\}\n$`).FindStringSubmatch(out[i-1])
		out[i] = checkpointOf.ReplaceAllString(out[i], fmt.Sprintf(`"checkpoint":{"seq":%d,"hash":"%s"`, i, m[1]))
		out = rechain(out)
	}
	return out
}

// upToFirstCheckpoint keeps the lines through the first checkpoint.
func upToFirstCheckpoint(lines []string) []string {
	for i, l := range lines {
		if strings.Contains(l, `"decision":"checkpoint"`) {
			return lines[:i+1]
		}
	}
	return lines
}
