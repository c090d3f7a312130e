package gateway

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestOriginAllowed(t *testing.T) {
	t.Parallel()
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7330}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 7330}
	cases := []struct {
		name    string
		local   net.Addr
		host    string
		origin  string
		allowed []string
		want    bool
	}{
		{"cli client on loopback", loopback, "127.0.0.1:7330", "", nil, true},
		{"localhost host", loopback, "localhost:7330", "", nil, true},
		{"ipv6 loopback host", loopback, "[::1]:7330", "", nil, true},
		{"rebinding host", loopback, "evil.example:7330", "", nil, false},
		// Attack: a page on another loopback port (a dev server) is not
		// trusted for being loopback.
		{"loopback origin not configured", loopback, "127.0.0.1:7330", "http://localhost:5173", nil, false},
		{"loopback origin configured", loopback, "127.0.0.1:7330", "http://localhost:5173", []string{"http://localhost:5173"}, true},
		{"the gateway's own origin", loopback, "127.0.0.1:7330", "http://127.0.0.1:7330", nil, true},
		{"own origin under a rebinding host", loopback, "evil.example:7330", "http://evil.example:7330", nil, false},
		{"foreign origin", loopback, "127.0.0.1:7330", "https://evil.example", nil, false},
		{"foreign origin, others configured", loopback, "127.0.0.1:7330", "https://evil.example", []string{"https://console.example"}, false},
		{"listed origin", loopback, "127.0.0.1:7330", "https://console.example", []string{"https://console.example"}, true},
		{"listed origin with a slash", loopback, "127.0.0.1:7330", "https://console.example", []string{"https://console.example/"}, true},
		{"null origin", loopback, "127.0.0.1:7330", "null", nil, false},
		{"garbage origin", loopback, "127.0.0.1:7330", "::::", nil, false},
		{"public listener any host", public, "gw.example", "", nil, true},
		{"public listener own origin", public, "gw.example", "https://gw.example", nil, true},
		{"public listener foreign origin", public, "gw.example", "https://evil.example", nil, false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("POST", "/mcp/x", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
		if got := originAllowed(r, tc.allowed); got != tc.want {
			t.Errorf("%s: originAllowed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{"127.0.0.1:7330": true, "localhost:1": true, "[::1]:7330": true, "0.0.0.0:7330": false, ":7330": false, "10.0.0.1:80": false} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}
