package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// daemon is a running `toolgate serve` process.
type daemon struct {
	base string // http://127.0.0.1:PORT
	cmd  *exec.Cmd

	mu  sync.Mutex
	log []string // its JSON log lines after "listening"
}

// logLines returns the daemon's log lines so far.
func (d *daemon) logLines() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.log...)
}

// startDaemon runs `toolgate serve` with args on a free loopback port and
// waits for its "listening" log line, which carries the bound address.
func startDaemon(t testing.TB, env []string, args ...string) *daemon {
	t.Helper()
	full := append([]string{"--log-format", "json", "serve", "--listen", "127.0.0.1:0"}, args...)
	cmd := exec.Command(binary, full...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(lines.Bytes(), &rec) == nil && rec.Msg == "listening" {
			d.base = "http://" + rec.Addr
			go func() {
				for lines.Scan() {
					d.mu.Lock()
					if len(d.log) < 10000 {
						d.log = append(d.log, lines.Text())
					}
					d.mu.Unlock()
				}
				_, _ = io.Copy(io.Discard, stderr)
			}()
			return d
		}
	}
	t.Fatalf("toolgate serve exited before listening:\n%s", strings.Join(seen, "\n"))
	return nil
}

// mcpHTTP opens an initialised MCP session on url with a bearer token.
func mcpHTTP(t testing.TB, url, token string) *client.Client {
	t.Helper()
	var opts []transport.StreamableHTTPCOption
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	cl, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	initClient(t, cl)
	return cl
}

// mcpStdio launches toolgate as a harness would and opens a session on it.
func mcpStdio(t testing.TB, env []string, args ...string) *client.Client {
	t.Helper()
	cl, err := client.NewStdioMCPClient(binary, append(os.Environ(), env...), args...)
	if err != nil {
		t.Fatal(err)
	}
	initClient(t, cl)
	return cl
}

func initClient(t testing.TB, cl *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "toolgate-e2e", Version: "1"}
	if _, err := cl.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

// call invokes tool and returns its text and error flag; a JSON-RPC error
// is returned as err.
func call(t testing.TB, cl *client.Client, tool string, args map[string]any) (text string, isError bool, res *mcp.CallToolResult, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err = cl.CallTool(ctx, req)
	if err != nil {
		return "", false, nil, err
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError, res, nil
}

func toolNames(t *testing.T, cl *client.Client) []string {
	t.Helper()
	list, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// writeFile writes data under dir, creating parents.
func writeFile(t testing.TB, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// toolgateHTTPStatus posts an initialize request with token and returns
// the HTTP status.
func toolgateHTTPStatus(t testing.TB, url, token string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
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
	resp.Body.Close()
	return resp.StatusCode
}

// withBearer starts a loopback relay in front of base that adds
// "Authorization: Bearer token" to every request, for clients (the MCP
// conformance suite) that cannot be told to send one; it returns the
// relay's base URL. The relay copies each answer as it is read, flushed,
// and ends the request upstream when the client goes (its context). It is
// not httputil.ReverseProxy: with FlushInterval -1 that cut a few of the
// streams it copied (about 1 in 50 subscriptions/listen streams here, the
// upstream connection closed under the copy, "use of closed network
// connection"), which the suite saw as checks lost through toolgate.
func withBearer(t testing.TB, base, token string) string {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		out.Header.Set("Authorization", "Bearer "+token)
		// The client's Host goes through as it was sent, with its Origin:
		// toolgate judges the pair as the client made it (the suite's
		// DNS-rebinding checks send both).
		out.Host = r.Host
		if r.ContentLength == 0 {
			out.Body = nil
		}
		resp, err := tr.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		f, _ := w.(http.Flusher)
		if f != nil {
			f.Flush() // the headers now: a stream may stay quiet a while
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if f != nil {
					f.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
