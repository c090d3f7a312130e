package metrics

import "testing"

// TestAuditHead: the head's seq follows every commit; the anchor is one
// series, replaced when the head is logged for anchoring, so the hash
// label never piles up series.
func TestAuditHead(t *testing.T) {
	t.Parallel()
	m := New()
	m.AuditHead(7, "aaa", true)
	m.AuditHead(8, "bbb", false)
	m.AuditHead(9, "ccc", false)
	fams := scrape(t, m)
	if v := fams["toolgate_audit_head_seq"].GetMetric()[0].GetGauge().GetValue(); v != 9 {
		t.Errorf("head seq %v, want 9", v)
	}
	if a := find(t, fams, "toolgate_audit_anchor_info", map[string]string{"seq": "7", "hash": "aaa"}); a.GetGauge().GetValue() != 1 {
		t.Errorf("anchor %v", a)
	}
	m.AuditHead(10, "ddd", true)
	fams = scrape(t, m)
	if n := len(fams["toolgate_audit_anchor_info"].GetMetric()); n != 1 {
		t.Fatalf("%d anchor series, want the one replaced", n)
	}
	if find(t, fams, "toolgate_audit_anchor_info", map[string]string{"seq": "10", "hash": "ddd"}) == nil {
		t.Errorf("the anchor was not replaced by 10:ddd: %v", fams["toolgate_audit_anchor_info"])
	}
}
