package gateway

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// uiFiles are the operator console's assets, served from the binary:
// nothing is loaded from the internet.
//
//go:embed ui
var uiFiles embed.FS

// consoleCookie carries a console session id (HttpOnly, SameSite=Strict).
const consoleCookie = "toolgate_console"

// consoleHeader must accompany the console's state-changing requests: a
// cross-origin page cannot add it without a CORS preflight nobody answers.
const consoleHeader = "X-Toolgate-Console"

// consoleSessionTTL is how long a console login lasts.
const consoleSessionTTL = 12 * time.Hour

// consoleCSP confines the console to its own assets and its own origin.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// consoleSessions are the logged-in consoles of this process: random ids
// standing in for the admin token, which never reaches a cookie.
type consoleSessions struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (s *consoleSessions) create() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]time.Time{}
	}
	for k, exp := range s.m {
		if now.After(exp) {
			delete(s.m, k)
		}
	}
	s.m[id] = now.Add(consoleSessionTTL)
	return id
}

func (s *consoleSessions) valid(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.m[id]
	return ok && time.Now().Before(exp)
}

func (s *consoleSessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// consoleSession reports whether r carries a live console session.
func (g *Gateway) consoleSession(r *http.Request) bool {
	c, err := r.Cookie(consoleCookie)
	return err == nil && c.Value != "" && g.sessions.valid(c.Value)
}

// sameOrigin reports whether a browser request comes from the page this
// gateway served (or from no page at all).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

// mountConsole adds the operator console at /ui.
func (g *Gateway) mountConsole(mux *http.ServeMux) {
	assets, _ := fs.Sub(uiFiles, "ui")
	static := http.StripPrefix("/ui/assets/", http.FileServer(http.FS(assets)))
	mux.Handle("GET /ui/assets/", consoleHeaders(static))
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusFound)
	})
	mux.Handle("GET /ui/{$}", consoleHeaders(http.HandlerFunc(g.consolePage)))
	mux.Handle("POST /ui/login", consoleHeaders(http.HandlerFunc(g.consoleLogin)))
	mux.Handle("POST /ui/logout", consoleHeaders(http.HandlerFunc(g.consoleLogout)))
	mux.Handle("GET /ui/ws", g.adminOnly(g.consoleFeed))
}

func consoleHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", consoleCSP)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "same-origin") // no-referrer would make forms send Origin: null
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// consolePage serves the console to a logged-in operator and the login
// form to anyone else. /ui/?token=… logs in once and drops the token from
// the address bar.
func (g *Gateway) consolePage(w http.ResponseWriter, r *http.Request) {
	if !originAllowed(r, g.ws.Gateway.AllowedOrigins) {
		http.Error(w, "forbidden: this Host may not reach toolgate (DNS rebinding protection)", http.StatusForbidden)
		return
	}
	if g.admin.off != "" {
		http.Error(w, "toolgate console: "+g.admin.off, http.StatusForbidden)
		return
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		if !g.admin.tokenOK(tok) {
			g.serveUIFile(w, "login.html", http.StatusUnauthorized)
			return
		}
		g.startSession(w)
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	if !g.consoleSession(r) {
		g.serveUIFile(w, "login.html", http.StatusOK)
		return
	}
	g.serveUIFile(w, "index.html", http.StatusOK)
}

func (g *Gateway) consoleLogin(w http.ResponseWriter, r *http.Request) {
	if !originAllowed(r, g.ws.Gateway.AllowedOrigins) || !sameOrigin(r) {
		http.Error(w, "forbidden: log in from the console's own page", http.StatusForbidden)
		return
	}
	if g.admin.off != "" {
		http.Error(w, "toolgate console: "+g.admin.off, http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if !g.admin.tokenOK(r.PostFormValue("token")) {
		g.log.Warn("console login refused", "remote", r.RemoteAddr)
		g.serveUIFile(w, "login.html", http.StatusUnauthorized)
		return
	}
	g.startSession(w)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (g *Gateway) consoleLogout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	if c, err := r.Cookie(consoleCookie); err == nil {
		g.sessions.end(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (g *Gateway) startSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: consoleCookie, Value: g.sessions.create(), Path: "/",
		MaxAge: int(consoleSessionTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
}

func (g *Gateway) serveUIFile(w http.ResponseWriter, name string, status int) {
	b, err := uiFiles.ReadFile("ui/" + name)
	if err != nil {
		http.Error(w, "console asset missing: "+name, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
