package mcpwire

import "testing"

func TestEra(t *testing.T) {
	t.Parallel()
	for era, want := range map[Era]string{EraLegacy: "2025-11-25 or earlier", EraModern: "2026-07-28 only", EraDual: "2026-07-28 and earlier"} {
		if era.String() != want || era.Stateless() != (era != EraLegacy) {
			t.Errorf("%d: %q", era, era.String())
		}
	}
	if EraOf([]string{"2026-07-28"}) != EraModern || EraOf([]string{"2026-07-28", "2025-11-25"}) != EraDual {
		t.Error("EraOf")
	}
}
