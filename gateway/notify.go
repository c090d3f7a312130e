package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/notify"
)

// DecisionNotifyFailed is the audit decision of a held call whose webhook
// event could not be delivered.
const DecisionNotifyFailed = "notify-failed"

// initNotify starts gateway.approvals.notify.webhook, if declared, and
// returns what the broker calls when this process opens a request (nil
// without a webhook). Each undelivered event is audited through journal.
func (g *Gateway) initNotify(journal *callpipe.Journal) (func(approvals.Request), error) {
	h := g.ws.Gateway.Approvals.Notify.Webhook
	if h == nil {
		return nil, nil
	}
	headers := map[string]string{}
	for name, ref := range h.Headers {
		v, err := ref.Resolve(g.getenv)
		if err != nil || v == "" {
			return nil, fmt.Errorf("%s: gateway.approvals.notify.webhook.headers.%s could not be read (%v); export it", ref.Pos, name, err)
		}
		headers[name] = v
	}
	wh, err := notify.New(notify.Options{
		URL: h.URL, Headers: headers, Redactor: g.runner.Redactor(),
		Approve: func(id string) string { return g.operatorCommand("approve", id) },
		Deny:    func(id string) string { return g.operatorCommand("deny", id) },
		OnFailure: func(f notify.Failure) {
			if err := journal.Append(notifyFailedEvent(f)); err != nil {
				g.log.Error("audit append failed for an undelivered approval webhook", "approval", f.Event.ID, "err", err)
			}
		},
		Logger: g.log,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Pos, err)
	}
	g.notifier = wh
	return wh.Held, nil
}

// operatorCommand is the one command line an operator runs to decide
// request id: the daemon's admin API when this process serves one, else
// the workspace's store.
func (g *Gateway) operatorCommand(verb, id string) string {
	if u := g.adminURL(); u != "" {
		return fmt.Sprintf("toolgate approvals --server %s %s %s", u, verb, id)
	}
	return fmt.Sprintf("toolgate approvals -w %s %s %s", g.workspaceAbs(), verb, id)
}

// notifyFailedEvent is the audit event of an undelivered webhook event.
func notifyFailedEvent(f notify.Failure) *audit.Event {
	approval, _ := json.Marshal(struct {
		ID string `json:"id"`
	}{f.Event.ID})
	return &audit.Event{
		Agent:    f.Event.Agent,
		Action:   f.Event.Action,
		Decision: DecisionNotifyFailed,
		Tier:     f.Event.Tier,
		Approval: approval,
		Reason:   fmt.Sprintf("approval webhook for %s not delivered (%s after %d attempt(s)): %s", f.Event.ID, f.Kind, f.Attempts, f.Err),
	}
}
