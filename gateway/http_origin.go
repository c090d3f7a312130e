package gateway

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// originAllowed guards against DNS rebinding and cross-site requests: a
// request from a browser carries Origin, and only loopback origins (or those
// the workspace lists) may drive the gateway. Requests without Origin come
// from non-browser clients and are judged by their token alone.
func originAllowed(r *http.Request, allowed []string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return hostAllowed(r)
	}
	for _, a := range allowed {
		if strings.EqualFold(a, o) {
			return true
		}
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return isLoopbackHost(u.Hostname()) && hostAllowed(r)
}

// allowOrigin is originAllowed under the workspace's allowed origins.
func (g *Gateway) allowOrigin(r *http.Request) bool {
	return originAllowed(r, g.ws.Gateway.AllowedOrigins)
}

// forbidOrigin answers a request allowOrigin refused.
func forbidOrigin(w http.ResponseWriter) {
	http.Error(w, "forbidden: this Origin or Host may not reach toolgate (DNS rebinding protection); list trusted origins in gateway.allowed_origins", http.StatusForbidden)
}

// hostAllowed rejects a loopback listener reached under a non-loopback Host
// name, the signature of DNS rebinding.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	host, _, err := net.SplitHostPort(local.String())
	if err != nil || !isLoopbackHost(host) {
		return true
	}
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	return isLoopbackHost(h)
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether a listen address binds loopback only.
func IsLoopbackAddr(addr string) bool {
	host := addr
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		host = addr[:i]
	}
	return isLoopbackHost(host)
}
