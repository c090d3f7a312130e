package admin

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

	"github.com/toolgate/toolgate/identity"
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
	m  map[string]consoleSession
}

// consoleSession is one login: who signed in, until when.
type consoleSession struct {
	who string
	exp time.Time
}

func (s *consoleSessions) create(who string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]consoleSession{}
	}
	for k, c := range s.m {
		if now.After(c.exp) {
			delete(s.m, k)
		}
	}
	s.m[id] = consoleSession{who: who, exp: now.Add(consoleSessionTTL)}
	return id
}

// valid returns who holds the live session id.
func (s *consoleSessions) valid(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.m[id]
	if !ok || !time.Now().Before(c.exp) {
		return "", false
	}
	return c.who, true
}

func (s *consoleSessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// consoleSession returns who is signed in on r's console session.
func (s *Server) consoleSession(r *http.Request) (string, bool) {
	c, err := r.Cookie(consoleCookie)
	if err != nil || c.Value == "" {
		return "", false
	}
	return s.sessions.valid(c.Value)
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
func (s *Server) mountConsole(mux *http.ServeMux) {
	assets, _ := fs.Sub(uiFiles, "ui")
	static := http.StripPrefix("/ui/assets/", http.FileServer(http.FS(assets)))
	mux.Handle("GET /ui/assets/", consoleHeaders(static))
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusFound)
	})
	mux.Handle("GET /ui/{$}", consoleHeaders(http.HandlerFunc(s.consolePage)))
	mux.Handle("POST /ui/login", consoleHeaders(http.HandlerFunc(s.consoleLogin)))
	mux.Handle("POST /ui/logout", consoleHeaders(http.HandlerFunc(s.consoleLogout)))
	mux.Handle("GET /ui/ws", s.Guard(http.HandlerFunc(s.consoleFeed)))
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
// form to anyone else. A token in the address (/ui/?token=…) is refused
// (refuseTokenInURL): the console logs in by POST only.
func (s *Server) consolePage(w http.ResponseWriter, r *http.Request) {
	if !s.opts.AllowOrigin(r) {
		http.Error(w, "forbidden: this Host may not reach toolgate (DNS rebinding protection)", http.StatusForbidden)
		return
	}
	if !s.On() {
		http.Error(w, "toolgate console: "+s.opts.Off, http.StatusForbidden)
		return
	}
	if refuseTokenInURL(w, r) {
		return
	}
	if _, ok := s.consoleSession(r); !ok {
		s.serveUIFile(w, "login.html", http.StatusOK)
		return
	}
	s.serveUIFile(w, "index.html", http.StatusOK)
}

// urlSecretParams are query parameters that would carry a secret in a URL.
var urlSecretParams = []string{"token", "access_token", "admin_token"}

// refuseTokenInURL answers 400 to a request whose URL carries a token,
// right or wrong, and reports whether it did. Trust boundary: a secret in
// a URL lands in browser history, proxy and server logs and Referer
// headers, so no admin route takes one there; the console's login is a
// POST (/ui/login) and the API takes Authorization: Bearer.
func refuseTokenInURL(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	for _, p := range urlSecretParams {
		if q.Has(p) {
			jsonError(w, http.StatusBadRequest, "a token is never taken in a URL (?"+p+"=…): it would stay in browser history, logs and Referer headers. "+
				"Sign in with the form at /ui/ (POST /ui/login), or send Authorization: Bearer <token>; and treat the token in that URL as exposed — rotate it")
			return true
		}
	}
	return false
}

func (s *Server) consoleLogin(w http.ResponseWriter, r *http.Request) {
	if !s.opts.AllowOrigin(r) || !sameOrigin(r) {
		http.Error(w, "forbidden: log in from the console's own page", http.StatusForbidden)
		return
	}
	if !s.On() {
		http.Error(w, "toolgate console: "+s.opts.Off, http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 32<<10) // room for a JWT
	who, ok := s.identify(r.Context(), strings.TrimSpace(r.PostFormValue("token")))
	if !ok {
		s.log.Warn("console login refused", "remote", r.RemoteAddr)
		s.opts.OnRefused(identity.RefusedUnknownToken)
		s.serveUIFile(w, "login.html", http.StatusUnauthorized)
		return
	}
	s.log.Info("console login", "operator", who, "remote", r.RemoteAddr)
	s.startSession(w, who)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (s *Server) consoleLogout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	if c, err := r.Cookie(consoleCookie); err == nil {
		s.sessions.end(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (s *Server) startSession(w http.ResponseWriter, who string) {
	http.SetCookie(w, &http.Cookie{
		Name: consoleCookie, Value: s.sessions.create(who), Path: "/",
		MaxAge: int(consoleSessionTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteStrictMode,
	})
}

func (s *Server) serveUIFile(w http.ResponseWriter, name string, status int) {
	b, err := uiFiles.ReadFile("ui/" + name)
	if err != nil {
		http.Error(w, "console asset missing: "+name, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
