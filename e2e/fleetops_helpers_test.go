package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// This file is the bench of the fleet-operations tests (issue 17): an
// identity provider's keys the test signs with (go-jose), a downstream MCP
// server on mcp-go in this process whose tool description the test can
// change while toolgate runs and which records every HTTP request it gets
// (headers included), and an OTLP/HTTP receiver decoding what toolgate
// exports.

// signer is one signing key of the test's identity provider.
type signer struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newSigner(t testing.TB, kid string) signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{kid: kid, priv: k}
}

// token signs claims as a compact JWS (ES256, kid in the header).
func (s signer) token(t testing.TB, claims map[string]any) string {
	t.Helper()
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: s.priv, KeyID: s.kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(js).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// jwksDoc is the public JWK Set of keys.
func jwksDoc(t testing.TB, keys ...signer) []byte {
	t.Helper()
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jwksServer serves a JWK Set on loopback; set replaces it.
type jwksServer struct {
	srv *httptest.Server
	doc atomic.Pointer[[]byte]
}

func newJWKSServer(t testing.TB, doc []byte) *jwksServer {
	t.Helper()
	j := &jwksServer{}
	j.doc.Store(&doc)
	j.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(*j.doc.Load())
	}))
	t.Cleanup(j.srv.Close)
	return j
}

// replaceFile swaps a file's content by rename, as a deploy tool would.
func replaceFile(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// seenRequest is one HTTP request the downstream received.
type seenRequest struct {
	header http.Header
	body   []byte
}

// downstream is an MCP server (mcp-go, streamable HTTP) with two tools,
// greet and ping; greet's description can be changed at run time (the
// "rug pull" pinning defends against).
type downstream struct {
	t   testing.TB
	mcp *server.MCPServer
	srv *httptest.Server
	URL string

	mu   sync.Mutex
	seen []seenRequest
}

func newDownstream(t testing.TB, greetDesc string) *downstream {
	t.Helper()
	d := &downstream{t: t, mcp: server.NewMCPServer("fleet-downstream", "1.0.0", server.WithToolCapabilities(true))}
	d.setGreet(greetDesc)
	d.mcp.AddTool(mcp.NewTool("ping", mcp.WithDescription("Answers pong."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("pong"), nil
		})
	h := server.NewStreamableHTTPServer(d.mcp)
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		d.mu.Lock()
		d.seen = append(d.seen, seenRequest{header: r.Header.Clone(), body: body})
		d.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(d.srv.Close)
	d.URL = d.srv.URL + "/mcp"
	return d
}

// setGreet (re)declares greet with desc.
func (d *downstream) setGreet(desc string) {
	d.mcp.AddTool(mcp.NewTool("greet", mcp.WithDescription(desc), mcp.WithString("name", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("hello " + req.GetString("name", "")), nil
		})
}

// calls returns the requests whose body is a tools/call.
func (d *downstream) calls() []seenRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []seenRequest
	for _, r := range d.seen {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(r.body, &m) == nil && m.Method == "tools/call" {
			out = append(out, r)
		}
	}
	return out
}

func (d *downstream) all() []seenRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]seenRequest(nil), d.seen...)
}

// otlpSink is an in-process OTLP/HTTP traces endpoint.
type otlpSink struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPSink(t testing.TB) *otlpSink {
	t.Helper()
	o := &otlpSink{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var ex coltracepb.ExportTraceServiceRequest
		if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &ex) != nil {
			http.Error(w, "not an OTLP traces export", http.StatusBadRequest)
			return
		}
		o.mu.Lock()
		for _, rs := range ex.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				o.spans = append(o.spans, ss.Spans...)
			}
		}
		o.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// await polls until want finds what it needs among the spans received.
func (o *otlpSink) await(t testing.TB, want func([]*tracepb.Span) bool) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		o.mu.Lock()
		spans := append([]*tracepb.Span(nil), o.spans...)
		o.mu.Unlock()
		if want(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("the spans wanted never arrived; got %d: %v", len(spans), spanNames(spans))
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

func spanNames(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// startFleetDaemon runs `toolgate serve -w ws` with env on a loopback
// port, keeping its JSON log (for what the operator is told).
func startFleetDaemon(t testing.TB, ws string, env []string, args ...string) *loggedDaemon {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--log-format", "json", "serve", "--listen", "127.0.0.1:0", "-w", ws}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	d := &loggedDaemon{}
	cmd.Stderr = io.MultiWriter(lockedWriter{&d.mu, &d.log}, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		_ = pw.Close()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
				found <- rec.Addr
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case addr := <-found:
		d.base = "http://" + addr
	case <-time.After(30 * time.Second):
		t.Fatalf("toolgate serve did not listen:\n%s", d.logText())
	}
	return d
}

// postMCP posts one JSON-RPC body to url with the bearer token (none when
// empty) and returns the status, the WWW-Authenticate header and the body.
func postMCP(t testing.TB, url, token, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}
