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
		// want is the answer for /mcp; wantSame for the gateway's own
		// pages (console, admin API), where a same-origin page passes.
		want, wantSame bool
	}{
		{"cli client on loopback", loopback, "127.0.0.1:7330", "", nil, true, true},
		{"localhost host", loopback, "localhost:7330", "", nil, true, true},
		{"ipv6 loopback host", loopback, "[::1]:7330", "", nil, true, true},
		{"rebinding host", loopback, "evil.example:7330", "", nil, false, false},
		// Attack: a page on another loopback port (a dev server) is not
		// trusted for being loopback.
		{"loopback origin not configured", loopback, "127.0.0.1:7330", "http://localhost:5173", nil, false, false},
		{"loopback origin configured", loopback, "127.0.0.1:7330", "http://localhost:5173", []string{"http://localhost:5173"}, true, true},
		{"the console's own origin", loopback, "127.0.0.1:7330", "http://127.0.0.1:7330", nil, false, true},
		{"own origin under a rebinding host", loopback, "evil.example:7330", "http://evil.example:7330", nil, false, false},
		{"foreign origin", loopback, "127.0.0.1:7330", "https://evil.example", nil, false, false},
		{"foreign origin, others configured", loopback, "127.0.0.1:7330", "https://evil.example", []string{"https://console.example"}, false, false},
		{"listed origin", loopback, "127.0.0.1:7330", "https://console.example", []string{"https://console.example"}, true, true},
		{"listed origin with a slash", loopback, "127.0.0.1:7330", "https://console.example", []string{"https://console.example/"}, true, true},
		{"null origin", loopback, "127.0.0.1:7330", "null", nil, false, false},
		{"garbage origin", loopback, "127.0.0.1:7330", "::::", nil, false, false},
		{"public listener any host", public, "gw.example", "", nil, true, true},
		{"public listener own origin", public, "gw.example", "https://gw.example", nil, false, true},
		{"public listener foreign origin", public, "gw.example", "https://evil.example", nil, false, false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("POST", "/mcp/x", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
		if got := originAllowed(r, tc.allowed, false); got != tc.want {
			t.Errorf("%s: originAllowed(/mcp) = %v, want %v", tc.name, got, tc.want)
		}
		if got := originAllowed(r, tc.allowed, true); got != tc.wantSame {
			t.Errorf("%s: originAllowed(own pages) = %v, want %v", tc.name, got, tc.wantSame)
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
