package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// heldWorkspace has one strict write (vault:stash), held for an operator
// on every call, and a second agent so that the writer can be removed
// from a file that still loads.
const heldWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
STATE
  admin_token: {env: TG_ADMIN_TOKEN}
  approvals: {wait: WAIT, ttl: 10m}
command_packs:
  - id: vault
    permission: strict
    commands:
      - id: stash
        description: Put an item in the vault.
        argv: [ARGVECHO, stash, "{item}"]
        inputs: {type: object, properties: {item: {type: string}}, required: [item]}
        effects: write
agents:
  - id: other
    token: {env: OTHER_TOKEN}
    grants: [tool:vault:stash]
  - id: writer
    token: {env: WRITER_TOKEN}
    grants: [tool:vault:stash]
`

// heldDaemon starts a daemon on heldWorkspace (the embedded store) and
// returns it with the workspace file's path, its directory and its
// content.
func heldDaemon(t *testing.T, wait string) (d *daemon, ws, dir, content string) {
	t.Helper()
	dir = t.TempDir()
	content = heldContent(wait, "")
	ws = writeFile(t, dir, "toolgate.yaml", content)
	return startDaemon(t, heldEnv(""), "-w", ws), ws, dir, content
}

// heldContent is heldWorkspace with its approval wait and, for dsn != "",
// the state in PostgreSQL.
func heldContent(wait, dsn string) string {
	state := ""
	if dsn != "" {
		state = "  state: {postgres: {dsn: {env: HELD_DSN}}}"
	}
	return strings.NewReplacer("ARGVECHO", argvEcho, "WAIT", wait, "STATE\n", state+"\n").Replace(heldWorkspace)
}

func heldEnv(dsn string) []string {
	return append([]string{"OTHER_TOKEN=other-secret-token", "HELD_DSN=" + dsn}, approvalsEnv...)
}

// reloadTo writes content to the workspace file (by rename) and waits
// until the daemon has it in force.
func reloadTo(t *testing.T, d *daemon, ws, content string) {
	t.Helper()
	replaceFile(t, ws, []byte(content))
	rev := sha256Hex(content)
	waitFor(t, 20*time.Second, "the daemon to load the edit", func() bool { return statusOf(t, d).Workspace.Revision == rev })
}

// stashRuns counts the calls of vault:stash that ran (their outcome
// events).
func stashRuns(t *testing.T, dir string) int {
	n := 0
	for _, ev := range readAudit(t, dir+"/audit.jsonl") {
		if ev.Action == "command:call:vault:stash" && ev.Of != nil {
			n++
		}
	}
	return n
}

// TestHeldCallRefusedAfterReload: a call waiting for an operator is
// decided again when the approval lands: a reload that narrowed its grant
// (enum: [harmless]), that removed its agent, or that came and went (the
// file edited, then reverted to the very content the call was held under)
// refuses it with a reason naming the reload; the refusal is audited with
// the approval it consumed, and nothing ran.
func TestHeldCallRefusedAfterReload(t *testing.T) {
	t.Parallel()
	d, ws, dir, original := heldDaemon(t, "60s")
	narrowed := strings.Replace(original, "  - id: writer\n    token: {env: WRITER_TOKEN}\n    grants: [tool:vault:stash]\n",
		"  - id: writer\n    token: {env: WRITER_TOKEN}\n    grants: [{op: tool:vault:stash, param_constraints: {item: {enum: [harmless]}}}]\n", 1)
	removed := strings.Replace(original, "  - id: writer\n    token: {env: WRITER_TOKEN}\n    grants: [tool:vault:stash]\n", "", 1)
	if narrowed == original || removed == original {
		t.Fatal("the edits change nothing")
	}
	cases := []struct {
		name string
		// edits are the files put in force, in order, while the call waits.
		edits []string
		want  string
	}{
		{"grant narrowed", []string{narrowed}, `and the revision in force refuses it: `},
		{"agent removed", []string{removed}, `and the revision in force refuses it: unknown agent "writer"`},
		{"edited and reverted", []string{"# reviewed\n" + original, original}, "an approval covers the call only under the revision it was given in"},
	}
	for i, tc := range cases {
		cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)
		item := "gold-" + string(rune('a'+i))
		ch := callAsync(t, cl, "stash", map[string]any{"item": item}, nil)
		p := awaitPending(t, d)
		for _, content := range tc.edits {
			reloadTo(t, d, ws, content)
		}
		if r := approvalsCLI(t, d, "approve", p.ID); r.code != 0 {
			t.Fatalf("%s: approve %s: exit %d: %s", tc.name, p.ID, r.code, r.stderr)
		}
		res := receive(t, ch)
		wantHead := "DENIED: the workspace was reloaded while the call waited for approval " + p.ID + " ("
		if !res.isErr || !strings.HasPrefix(res.text, wantHead) || !strings.Contains(res.text, tc.want) {
			t.Fatalf("%s: approved after the reload: %q\nwant %q … %q", tc.name, res.text, wantHead, tc.want)
		}
		if tc.name == "grant narrowed" && !strings.Contains(res.text, "harmless") {
			t.Errorf("the narrowed grant's refusal does not name its bound: %q", res.text)
		}
		var audited bool
		for _, ev := range readAudit(t, dir+"/audit.jsonl") {
			if id := heldApprovalID(ev.Approval); ev.Action == "command:call:vault:stash" && ev.Decision == "deny" && id == p.ID && "DENIED: "+ev.Reason == res.text {
				audited = true
			}
		}
		if !audited {
			t.Fatalf("%s: no deny event with approval %s and the reason given", tc.name, p.ID)
		}
		if n := stashRuns(t, dir); n != 0 {
			t.Fatalf("%s: %d stash calls ran", tc.name, n)
		}
		reloadTo(t, d, ws, original+"# back "+item+"\n")
	}
}

// TestRevertedFileRevivesNoApproval: a call held until its wait ran out
// is approved while a reload is in force; the file is then reverted to
// the content the call was held under. The identical call, repeated, is
// not let through by that approval (same content hash, later generation):
// it opens a new request, and nothing runs.
func TestRevertedFileRevivesNoApproval(t *testing.T) {
	t.Parallel()
	d, ws, dir, orig := heldDaemon(t, "1s")
	cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)
	args := map[string]any{"item": "approved-before-revert"}
	text, _, _, err := call(t, cl, "stash", args)
	first := approvalIDPattern.FindString(text)
	if err != nil || first == "" || !strings.HasPrefix(text, "DENIED: approval pending") {
		t.Fatalf("held call: %q %v", text, err)
	}
	reloadTo(t, d, ws, "# under review\n"+orig)
	if r := approvalsCLI(t, d, "approve", first); r.code != 0 {
		t.Fatalf("approve: exit %d: %s", r.code, r.stderr)
	}
	reloadTo(t, d, ws, orig)
	text, _, _, err = call(t, cl, "stash", args)
	again := approvalIDPattern.FindString(text)
	if err != nil || again == "" || again == first || !strings.HasPrefix(text, "DENIED: approval pending") {
		t.Fatalf("the identical call after the revert: %q %v (first approval %s)", text, err, first)
	}
	if n := stashRuns(t, dir); n != 0 {
		t.Fatalf("%d stash calls ran: the reverted file revived the approval", n)
	}
}

// sha256Hex is a workspace file's revision: the SHA-256 of its content.
func sha256Hex(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// heldApprovalID is the id in an audit event's approval field.
func heldApprovalID(raw json.RawMessage) string {
	var a struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &a)
	return a.ID
}

// TestRevertedFileRevivesNoApprovalAcrossReplicas: two replicas share
// PostgreSQL, each with its own copy of the file. A call held on one is
// approved; both files are edited and then reverted. The replicas agree
// on each revision's generation, so the identical call on the other
// replica after the revert finds no approval: it opens a new request, and
// nothing runs.
func TestRevertedFileRevivesNoApprovalAcrossReplicas(t *testing.T) {
	t.Parallel()
	dsn := fleetDSN(t)
	content := heldContent("1s", dsn)
	var replicas []*daemon
	var files []string
	for range 2 {
		ws := writeFile(t, t.TempDir(), "toolgate.yaml", content)
		files = append(files, ws)
		replicas = append(replicas, startDaemon(t, heldEnv(dsn), "-w", ws))
	}
	args := map[string]any{"item": "approved-on-a"}
	text, _, _, err := call(t, mcpHTTP(t, replicas[0].base+"/mcp/vault", writerToken), "stash", args)
	first := approvalIDPattern.FindString(text)
	if err != nil || first == "" {
		t.Fatalf("held call on replica a: %q %v", text, err)
	}
	if r := approvalsCLI(t, replicas[1], "approve", first); r.code != 0 {
		t.Fatalf("approve on replica b: exit %d: %s", r.code, r.stderr)
	}
	for _, next := range []string{"# under review\n" + content, content} {
		for i, d := range replicas {
			reloadTo(t, d, files[i], next)
		}
	}
	var gens []int64
	for _, d := range replicas {
		var st struct {
			Reload struct {
				Generation int64 `json:"generation"`
			} `json:"reload"`
		}
		adminJSON(t, d, "GET", "/admin/status", &st)
		gens = append(gens, st.Reload.Generation)
	}
	if gens[0] != gens[1] || gens[0] != 3 {
		t.Fatalf("the replicas' generations after an edit and a revert: %v, want 3 on both", gens)
	}
	text, _, _, err = call(t, mcpHTTP(t, replicas[1].base+"/mcp/vault", writerToken), "stash", args)
	again := approvalIDPattern.FindString(text)
	if err != nil || again == "" || again == first || !strings.HasPrefix(text, "DENIED: approval pending") {
		t.Fatalf("the identical call on replica b after the revert: %q %v (approved: %s)", text, err, first)
	}
}
