package mcpwire

import (
	"net/http"
	"testing"
)

// TestHeaders: the names are the protocol's, in the canonical form Go's
// HTTP stack keys headers by.
func TestHeaders(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		HeaderProtocolVersion: "Mcp-Protocol-Version", HeaderSessionID: "Mcp-Session-Id",
		HeaderLastEventID: "Last-Event-Id", HeaderMethod: "Mcp-Method", HeaderName: "Mcp-Name",
	} {
		if got := http.CanonicalHeaderKey(name); got != want {
			t.Errorf("%s: canonical %q, want %q", name, got, want)
		}
	}
}
