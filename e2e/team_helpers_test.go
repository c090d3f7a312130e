package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/audit"
)

// teamWorkspace is a team's workspace: two named operators beside the
// shared admin token, approvalsWorkspace's cautious write (notes:append;
// here no rule approves it) and strict one (vault:stash), a credential the
// redactor knows, and NOTIFY / ARGUMENTS to fill in.
var teamWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl ARGUMENTS}
  admin_token: {env: TG_ADMIN_TOKEN}
  operators:
    - {id: alice, token: {env: ALICE_TOKEN}}
    - {id: bob, token: {env: BOB_TOKEN}}
  approvals:
    wait: WAIT
    ttl: 10m
NOTIFY
credentials:
  api: {env: TEAM_API_KEY}
` + approvalsWorkspace[strings.Index(approvalsWorkspace, "command_packs:"):]

const (
	aliceToken = "alice-operator-token-0123"
	bobToken   = "bob-operator-token-456789"
	teamAPIKey = "sk-team-live-9f8e7d6c5b4a"
)

var teamEnv = append([]string{"ALICE_TOKEN=" + aliceToken, "BOB_TOKEN=" + bobToken, "TEAM_API_KEY=" + teamAPIKey}, approvalsEnv...)

// teamOptions fill teamWorkspace's blanks.
type teamOptions struct {
	wait      string // approvals.wait (default 30s)
	notify    string // the approvals.notify block, indented under approvals
	arguments bool   // audit.arguments: redacted
	env       []string
	// extra is appended to the workspace (top-level blocks); grants
	// replaces writer's grants when set.
	extra, grants string
}

// teamDaemon starts a daemon on a fresh team workspace and returns it
// with the audit log's path.
func teamDaemon(t *testing.T, o teamOptions) (*daemon, string) {
	t.Helper()
	if o.wait == "" {
		o.wait = "30s"
	}
	args := ""
	if o.arguments {
		args = ", arguments: redacted"
	}
	dir := t.TempDir()
	y := strings.NewReplacer("ARGVECHO", argvEcho, "WAIT", o.wait, "NOTIFY\n", o.notify, "ARGUMENTS", args).Replace(teamWorkspace)
	if o.grants != "" {
		y = strings.Replace(y, "grants: [tool:notes:append, tool:vault:stash]", "grants: "+o.grants, 1)
	}
	y += o.extra
	ws := writeFile(t, dir, "toolgate.yaml", y)
	return startDaemon(t, append(append([]string(nil), teamEnv...), o.env...), "-w", ws), filepath.Join(dir, "audit.jsonl")
}

// operatorCLI runs `toolgate approvals --server d.base args…` with token.
func operatorCLI(t *testing.T, d *daemon, token string, args ...string) result {
	t.Helper()
	return toolgate(t, t.TempDir(), []string{"TOOLGATE_ADMIN_TOKEN=" + token}, append([]string{"approvals", "--server", d.base}, args...)...)
}

// eventsWhere returns the audit events for which keep holds.
func eventsWhere(t *testing.T, path string, keep func(audit.Event) bool) []audit.Event {
	t.Helper()
	var out []audit.Event
	for _, ev := range auditEvents(t, path) {
		if keep(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// approvalRecord decodes an event's approval field, timed rule included.
type approvalRecord struct {
	ID, By, Rule, From string
}

func recordOf(ev audit.Event) approvalRecord {
	var a approvalRecord
	_ = json.Unmarshal(ev.Approval, &a)
	return a
}
