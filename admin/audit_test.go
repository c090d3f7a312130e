package admin

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

func TestAuditQuery(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	old := time.Now().Add(-2 * time.Hour)
	events := []*audit.Event{
		{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow", Time: old},
		{Agent: "reader", Action: "command:call:json-tools:keys", Decision: "deny"},
		{Agent: "editor", Action: "mcp:call:mem:store", Decision: "approval"},
		{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow"},
	}
	for _, ev := range events {
		if err := e.log.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		query string
		want  []int64 // seqs
	}{
		{"", []int64{1, 2, 3, 4}},
		{"agent=reader", []int64{1, 2, 4}},
		{"decision=allow", []int64{1, 4}},
		{"action=command:call:json-tools:query", []int64{1, 4}},
		{"action=command:call:*", []int64{1, 2, 4}},
		{"since=1h", []int64{2, 3, 4}},
		{"until=1h", []int64{1}},
		{"since=" + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), []int64{2, 3, 4}},
		{"agent=reader&limit=1", []int64{4}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			resp := do(t, "GET", e.srv.URL+"/admin/audit?"+c.query, adminAuth, "")
			var got []audit.Event
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: %v", resp.Status, err)
			}
			var seqs []int64
			for _, ev := range got {
				seqs = append(seqs, ev.Seq)
			}
			if len(seqs) != len(c.want) {
				t.Fatalf("seqs = %v, want %v", seqs, c.want)
			}
			for i := range seqs {
				if seqs[i] != c.want[i] {
					t.Fatalf("seqs = %v, want %v", seqs, c.want)
				}
			}
		})
	}
	for _, bad := range []string{"since=yesterday", "until=soon", "limit=0", "limit=5001", "limit=x"} {
		if resp := do(t, "GET", e.srv.URL+"/admin/audit?"+bad, adminAuth, ""); resp.StatusCode != 400 {
			t.Errorf("%s: %s, want 400", bad, resp.Status)
		}
	}
}
