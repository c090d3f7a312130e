package mcpwire

import "testing"

func TestIsNotificationMethod(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]bool{"notifications/cancelled": true, "notifications/x": true, "tools/call": false, "notifications": false, "": false} {
		if IsNotificationMethod(method) != want {
			t.Errorf("IsNotificationMethod(%q) != %v", method, want)
		}
	}
}
