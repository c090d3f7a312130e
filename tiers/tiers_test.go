package tiers

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/workspace"
)

func TestOutcomeFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tier  workspace.Tier
		read  Outcome
		write Outcome
	}{
		{workspace.TierOpen, Allow, Allow},
		{workspace.TierCautious, Allow, Approval},
		{workspace.TierStrict, Approval, Approval},
		{workspace.TierReadonly, Allow, Deny},
		{"bogus", Deny, Deny},
		{"", Deny, Deny},
	}
	for _, tt := range tests {
		if got := OutcomeFor(tt.tier, workspace.EffectRead); got != tt.read {
			t.Errorf("OutcomeFor(%q, read) = %q, want %q", tt.tier, got, tt.read)
		}
		if got := OutcomeFor(tt.tier, workspace.EffectWrite); got != tt.write {
			t.Errorf("OutcomeFor(%q, write) = %q, want %q", tt.tier, got, tt.write)
		}
		// An undeclared or unknown effect is a write.
		for _, e := range []workspace.Effect{"", "delete"} {
			if got := OutcomeFor(tt.tier, e); got != tt.write {
				t.Errorf("OutcomeFor(%q, %q) = %q, want the write outcome %q", tt.tier, e, got, tt.write)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	overrides := map[string]workspace.Tier{"delete": workspace.TierStrict, "blank": ""}
	tests := []struct {
		name      string
		container workspace.Tier
		overrides map[string]workspace.Tier
		member    string
		want      workspace.Tier
	}{
		{"override wins", workspace.TierOpen, overrides, "delete", workspace.TierStrict},
		{"container when no override", workspace.TierOpen, overrides, "read", workspace.TierOpen},
		{"empty override falls through", workspace.TierReadonly, overrides, "blank", workspace.TierReadonly},
		{"default cautious", "", nil, "x", workspace.TierCautious},
		{"override without container", "", overrides, "delete", workspace.TierStrict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Resolve(tt.container, tt.overrides, tt.member); got != tt.want {
				t.Errorf("Resolve = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	overrides := map[string]workspace.Duration{"slow": workspace.Duration(time.Minute)}
	tests := []struct {
		name   string
		def    workspace.Duration
		member string
		want   time.Duration
	}{
		{"override", workspace.Duration(5 * time.Second), "slow", time.Minute},
		{"container default", workspace.Duration(5 * time.Second), "fast", 5 * time.Second},
		{"builtin", 0, "fast", 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Timeout(tt.def, overrides, tt.member, 30*time.Second); got != tt.want {
				t.Errorf("Timeout = %v, want %v", got, tt.want)
			}
		})
	}
}
