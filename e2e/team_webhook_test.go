package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// hookEvent is the webhook's JSON body, as a receiver reads it.
type hookEvent struct {
	Type, ID, Agent, Action, Arguments, Tier, Reason, Approve, Deny string
	Expires                                                         time.Time
}

// TestTeamWebhookTellsOfHeldCalls: a loopback receiver gets one event per
// held call, with its headers, the id, agent, action, tier, expiry, the
// approve command (which works) and an argument preview whose credential
// is redacted; the call itself waits as usual.
func TestTeamWebhookTellsOfHeldCalls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []hookEvent
	var auth []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev hookEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Errorf("webhook body %q: %v", b, err)
		}
		if strings.Contains(string(b), teamAPIKey) {
			t.Errorf("the webhook body carries the credential: %s", b)
		}
		mu.Lock()
		got, auth = append(got, ev), append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	t.Cleanup(recv.Close)
	notify := "    notify:\n      webhook:\n        url: " + recv.URL + "/held\n        headers: {Authorization: {env: HOOK_AUTH}}\n"
	d, _ := teamDaemon(t, teamOptions{wait: "60s", notify: notify, env: []string{"HOOK_AUTH=Bearer hook-secret"}})
	notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)
	waiting := callAsync(t, notes, "append", map[string]any{"text": "deploy with key " + teamAPIKey}, nil)
	p := awaitPending(t, d)
	waitFor(t, 20*time.Second, "the webhook event", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 1 })
	mu.Lock()
	ev, a := got[0], auth[0]
	mu.Unlock()
	if ev.Type != "approval.held" || ev.ID != p.ID || ev.Agent != "writer" || ev.Action != "command:call:notes:append" || ev.Tier != "cautious" ||
		!ev.Expires.Equal(p.Expires) || a != "Bearer hook-secret" {
		t.Errorf("webhook event %+v (Authorization %q), want request %+v", ev, a, p)
	}
	if !strings.Contains(ev.Arguments, "deploy with key") || !strings.Contains(ev.Arguments, "[REDACTED:api]") {
		t.Errorf("argument preview %q: want the text with the credential redacted", ev.Arguments)
	}
	if !strings.HasPrefix(ev.Approve, "toolgate approvals --server "+d.base+" approve "+p.ID) {
		t.Errorf("approve command %q", ev.Approve)
	}
	// The command from the event approves it.
	argv := strings.Fields(ev.Approve)[1:]
	if r := toolgate(t, t.TempDir(), []string{"TOOLGATE_ADMIN_TOKEN=" + aliceToken}, argv...); r.code != 0 {
		t.Fatalf("%s: exit %d %s", ev.Approve, r.code, r.stderr)
	}
	if r := receive(t, waiting); r.isErr {
		t.Errorf("the approved call: %+v", r)
	}
}

// TestTeamWebhookNeverDelaysTheCall: a receiver that fails (HTTP 500) and
// one that never answers cost the held call nothing — it returns after
// approvals.wait as without a webhook — and the failed delivery is
// audited once its retries run out.
func TestTeamWebhookNeverDelaysTheCall(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"failing", "hanging"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if name == "failing" {
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				_, _ = io.Copy(io.Discard, r.Body)
				select { // never answers while the test runs
				case <-release:
				case <-r.Context().Done():
				}
			}))
			t.Cleanup(func() { close(release); recv.Close() })
			notify := "    notify:\n      webhook: {url: " + recv.URL + "}\n"
			d, auditPath := teamDaemon(t, teamOptions{wait: "1s", notify: notify})
			notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)
			for i := range 3 {
				start := time.Now()
				text, isErr, _, err := call(t, notes, "append", map[string]any{"text": "held " + string(rune('a'+i))})
				if took := time.Since(start); err != nil || !isErr || !strings.Contains(text, "approval pending") || took > 3*time.Second {
					t.Fatalf("held call %d: %q %v after %s, want approval pending after about 1s", i, text, err, took)
				}
			}
			if name == "failing" {
				waitFor(t, 60*time.Second, "the undelivered webhook in the audit", func() bool {
					return len(eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Decision == "notify-failed" })) == 3
				})
				ev := eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Decision == "notify-failed" })[0]
				if !strings.Contains(ev.Reason, "after 5 attempt(s)") || !strings.Contains(ev.Reason, "HTTP 500") || ev.Agent != "writer" {
					t.Errorf("notify-failed event %+v", ev)
				}
			}
		})
	}
}
