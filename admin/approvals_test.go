package admin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/approvals"
)

func TestApprovalsAPI(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	id := e.hold(t, "writer", "command:call:vault:stash")
	other := e.hold(t, "writer", "command:call:vault:drop")

	var pending []approvals.Request
	resp := do(t, "GET", e.srv.URL+"/admin/approvals", adminAuth, "")
	if err := json.NewDecoder(resp.Body).Decode(&pending); err != nil || len(pending) != 2 {
		t.Fatalf("pending: %v, err %v", pending, err)
	}
	var one approvals.Request
	resp = do(t, "GET", e.srv.URL+"/admin/approvals/"+id, adminAuth, "")
	if err := json.NewDecoder(resp.Body).Decode(&one); err != nil || one.ID != id || one.State != approvals.Pending || argItem(one) != "<b>x</b>" {
		t.Fatalf("get: %+v, err %v", one, err)
	}
	if resp := do(t, "GET", e.srv.URL+"/admin/approvals/ap-nope", adminAuth, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("get unknown: %s", resp.Status)
	}

	resp = do(t, "POST", e.srv.URL+"/admin/approvals/"+id+"/approve", adminAuth, "")
	if err := json.NewDecoder(resp.Body).Decode(&one); err != nil || resp.StatusCode != 200 || one.State != approvals.Approved || one.DecidedBy != approvals.ByOperator {
		t.Fatalf("approve: %s %+v %v", resp.Status, one, err)
	}
	cases := []struct {
		name, path, body string
		want             int
		says             string
	}{
		{"deny with a body that is not JSON", other + "/deny", "reason: no", http.StatusBadRequest, `{"reason": "…"}`},
		{"deny with a reason", other + "/deny", `{"reason":"not today"}`, 200, ""},
		{"deny again: final", other + "/deny", "", http.StatusConflict, "the agent repeats its call"},
		{"approve a denied request: final", other + "/approve", "", http.StatusConflict, "final"},
		{"deny unknown", "ap-nope/deny", "", http.StatusNotFound, "no such approval request"},
	}
	for _, c := range cases {
		resp := do(t, "POST", e.srv.URL+"/admin/approvals/"+c.path, adminAuth, c.body)
		var body struct {
			Error      string `json:"error"`
			DenyReason string `json:"deny_reason"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		if resp.StatusCode != c.want || !strings.Contains(body.Error, c.says) {
			t.Errorf("%s: %s %q, want %d saying %q", c.name, resp.Status, body.Error, c.want, c.says)
		}
		if c.want == 200 && body.DenyReason != "not today" {
			t.Errorf("%s: deny_reason %q", c.name, body.DenyReason)
		}
	}
	resp = do(t, "GET", e.srv.URL+"/admin/approvals", adminAuth, "")
	if b := readAll(t, resp); strings.TrimSpace(b) != "[]" {
		t.Errorf("no pending request left: %s, want []", b)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func argItem(r approvals.Request) string {
	var args struct{ Item string }
	_ = json.Unmarshal(r.Arguments, &args)
	return args.Item
}
