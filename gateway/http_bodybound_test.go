package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/workspace"
)

// TestBoundBodies: a body trickled slower than body_timeout is answered
// 413 and its connection closed, also before a handler that never reads
// it (net/http would wait for the rest of it first); a body over max_body
// is refused; one in time reaches the handler whole, with no deadline
// left on the connection.
func TestBoundBodies(t *testing.T) {
	t.Parallel()
	g := &Gateway{ws: &workspace.Workspace{Gateway: workspace.Gateway{
		BodyTimeout:  workspace.Duration(300 * time.Millisecond),
		MaxBodyBytes: 64,
	}}}
	srv := httptest.NewServer(g.boundBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/read" {
			b, _ := io.ReadAll(r.Body)
			// Past body_timeout, the request is still alive: the
			// deadline bounds the body, not the request.
			time.Sleep(400 * time.Millisecond)
			if r.Context().Err() != nil {
				fmt.Fprint(w, "the request's context ended")
				return
			}
			fmt.Fprintf(w, "read %q", b)
			return
		}
		http.Error(w, "refused without reading", http.StatusUnauthorized)
	})))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	cases := []struct {
		name, path, body string
		trickle          bool
		want             string
	}{
		{name: "slow, handler never reads", path: "/refuse", body: `{"jsonrpc":"2.0"}`, trickle: true, want: "HTTP/1.1 413"},
		{name: "slow, handler reads", path: "/read", body: `{"jsonrpc":"2.0"}`, trickle: true, want: "HTTP/1.1 413"},
		{name: "too large", path: "/read", body: strings.Repeat("x", 65), want: "HTTP/1.1 413"},
		{name: "in time", path: "/read", body: `{"a":1}`, want: `read "{\"a\":1}"`},
		{name: "in time, handler never reads", path: "/refuse", body: `{"a":1}`, want: "HTTP/1.1 401"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", c.path, len(c.body))
			stop := make(chan struct{})
			defer close(stop)
			if c.trickle {
				go func() {
					for i := 0; i < len(c.body); i++ {
						if _, err := io.WriteString(conn, c.body[i:i+1]); err != nil {
							return
						}
						select {
						case <-stop:
							return
						case <-time.After(200 * time.Millisecond):
						}
					}
				}()
			} else {
				io.WriteString(conn, c.body)
			}
			_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
			start := time.Now()
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			got := resp.Proto + " " + resp.Status + " " + string(b)
			if !strings.Contains(got, c.want) {
				t.Errorf("got %s, want %s", got, c.want)
			}
			if c.trickle {
				// Answered within the deadline and closed (EOF, not our
				// read deadline).
				_, err := br.ReadByte()
				if took := time.Since(start); err != io.EOF || took > 2*time.Second {
					t.Errorf("connection: %v after %s; want closed by the server", err, took)
				}
			}
		})
	}
}
