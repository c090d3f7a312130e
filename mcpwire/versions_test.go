package mcpwire

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestNegotiateLegacy(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26", "2024-11-05": "2024-11-05",
		"2026-07-28": "2025-11-25", "1999-01-01": "2025-11-25", "": "2025-11-25",
	} {
		if got := NegotiateLegacy(in); got != want {
			t.Errorf("NegotiateLegacy(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersionLists: one list, newest first, the modern version ahead of
// the legacy ones; callers get copies they may change.
func TestVersionLists(t *testing.T) {
	t.Parallel()
	want := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	if got := SupportedVersions(); !slices.Equal(got, want) {
		t.Errorf("SupportedVersions %v, want %v", got, want)
	}
	if got := LegacyVersions(); !slices.Equal(got, want[1:]) || got[0] != LatestLegacy {
		t.Errorf("LegacyVersions %v", got)
	}
	mine := LegacyVersions()
	mine[0] = "changed"
	SupportedVersions()[1] = "changed"
	if LegacyVersions()[0] != LatestLegacy || NegotiateLegacy("changed") != LatestLegacy {
		t.Error("a caller changed the version list")
	}
	var list []string
	if err := json.Unmarshal(AppendVersionList(nil), &list); err != nil || !slices.Equal(list, want) {
		t.Errorf("AppendVersionList %s: %v", AppendVersionList(nil), err)
	}
	if got := string(AppendVersionList([]byte(`{"v":`))); got != `{"v":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]` {
		t.Errorf("AppendVersionList appends: %s", got)
	}
}

func TestIsStateless(t *testing.T) {
	t.Parallel()
	if !IsStateless(Modern) || !IsStateless("2027-01-01") || IsStateless(LatestLegacy) || IsStateless("") {
		t.Error("IsStateless")
	}
	if !ResumableVersion("2025-11-25") || ResumableVersion("2025-06-18") || ResumableVersion(Modern) || ResumableVersion("") {
		t.Error("ResumableVersion")
	}
}

func TestRemovedInModern(t *testing.T) {
	t.Parallel()
	for _, m := range []string{"initialize", "ping", "notifications/initialized", "tasks/list"} {
		if !RemovedInModern(m) {
			t.Errorf("%s not removed", m)
		}
	}
	for _, m := range []string{"tools/call", "server/discover", "subscriptions/listen", "tasks/get"} {
		if RemovedInModern(m) {
			t.Errorf("%s removed", m)
		}
	}
}
