package gateway

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// originAllowed guards against DNS rebinding and cross-site requests: a
// request from a browser carries Origin, and only the origins the
// workspace lists in gateway.allowed_origins, and the gateway's own
// origin (an Origin naming the Host the request came under, itself
// checked by hostAllowed: the only pages there are toolgate's console),
// may drive the gateway. A loopback origin is not trusted for being
// loopback: any local page, a dev server on localhost:5173, could
// otherwise call tools. (The MCP conformance suite's DNS-rebinding check
// asks exactly this: its own localhost Host and Origin accepted, a foreign
// Host refused.) Requests without Origin come from non-browser clients and
// are judged by their token alone.
func originAllowed(r *http.Request, allowed []string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return hostAllowed(r)
	}
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimRight(a, "/"), o) {
			return true
		}
	}
	if !hostAllowed(r) {
		return false
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// allowOrigin is originAllowed under the workspace's allowed origins, for
// every route: /mcp, the console, the admin API, metrics.
func (g *Gateway) allowOrigin(r *http.Request) bool {
	return originAllowed(r, g.ws.Gateway.AllowedOrigins)
}

// forbidOrigin answers a request allowOrigin refused.
func forbidOrigin(w http.ResponseWriter, r *http.Request) {
	msg := "forbidden: this Host may not reach toolgate (DNS rebinding protection)"
	if o := r.Header.Get("Origin"); o != "" {
		msg = "forbidden: Origin " + strings.ReplaceAll(o, "\n", "") + " is not in gateway.allowed_origins (a browser page may reach toolgate only from a listed origin; clients that are not browsers send no Origin)"
	}
	http.Error(w, msg, http.StatusForbidden)
}

// hostAllowed rejects a loopback listener reached under a non-loopback Host
// name, the signature of DNS rebinding.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	if !isLoopbackAddr(local) {
		return true
	}
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	return isLoopbackHost(h)
}

// isLoopbackAddr reports whether a listener's address is loopback; a TCP
// one (every request's) is read without formatting it.
func isLoopbackAddr(a net.Addr) bool {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	host, _, err := net.SplitHostPort(a.String())
	return err == nil && isLoopbackHost(host)
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
