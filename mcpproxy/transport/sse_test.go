package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
)

func TestReadEvents(t *testing.T) {
	t.Parallel()
	in := ": a comment\r\n" +
		"event: endpoint\r\ndata: /message?s=1\r\n\r\n" +
		"id: 7\nretry: 250\ndata: {\"a\":\ndata: 1}\n\n" +
		"retry: x1\ndata:no-space\n\n" +
		"id: 8\n\n" +
		"retry: 5\n\n" +
		"data: unterminated"
	var got []event
	if err := readEvents(strings.NewReader(in), 1<<10, func(ev event) bool { got = append(got, ev); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("events %+v", got)
	}
	if got[0].Type != "endpoint" || string(got[0].Data) != "/message?s=1" {
		t.Errorf("endpoint %+v", got[0])
	}
	if got[1].ID != "7" || !got[1].HasRetry || got[1].Retry != 250*time.Millisecond || string(got[1].Data) != "{\"a\":\n1}" {
		t.Errorf("joined data %+v", got[1])
	}
	if got[2].HasRetry || string(got[2].Data) != "no-space" {
		t.Errorf("bad retry ignored %+v", got[2])
	}
	if got[3].ID != "8" || len(got[3].Data) != 0 || !got[4].HasRetry {
		t.Errorf("id-only and retry-only events %+v %+v", got[3], got[4])
	}
	n := 0
	_ = readEvents(strings.NewReader("data: 1\n\ndata: 2\n\n"), 100, func(event) bool { n++; return false })
	if n != 1 {
		t.Errorf("fn returning false read %d events", n)
	}
	for _, big := range []string{"data: " + strings.Repeat("x", 100) + "\n\n", "data: 1\ndata: " + strings.Repeat("y", 40<<10) + "\n\n"} {
		if err := readEvents(strings.NewReader(big), 64, func(event) bool { return true }); err == nil || !strings.Contains(err.Error(), "larger than 64") {
			t.Errorf("oversized event: %v", err)
		}
	}
}

// TestSSEConn: a legacy HTTP+SSE server (mcp-go's): the endpoint event
// names where messages go; answers come on the stream.
func TestSSEConn(t *testing.T) {
	t.Parallel()
	s, _ := servertest.GoServer(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	sse := server.NewSSEServer(s, server.WithBaseURL(srv.URL))
	mux.Handle("/sse", sse)
	mux.Handle("/message", sse)
	c := dial(t, &Config{ID: "legacy", URL: srv.URL + "/sse", Transport: "sse", Timeout: 10 * time.Second})
	initialize(t, c)
	if in := request(t, context.Background(), c, "1", "tools/call", callParams("echo", `{"text":"over sse"}`), nil); !strings.Contains(string(in.Msg), "over sse") {
		t.Errorf("answer %s", in.Msg)
	}
	c.Close()
	if c.Err() != ErrClosed {
		t.Errorf("closed with %v", c.Err())
	}
}

func TestSSEConnFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    http.HandlerFunc
		want string
	}{
		{"status", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusForbidden) }, "HTTP 403"},
		{"no endpoint", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: {}\n\n"))
		}, "closed its SSE stream"},
		{"bad endpoint", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("event: endpoint\ndata: http://[::1\n\n"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, "bad endpoint event"},
	}
	for _, c := range cases {
		srv := httptest.NewServer(c.h)
		_, err := dialSSE(context.Background(), &Config{ID: "s", URL: srv.URL, Transport: "sse"})
		srv.CloseClientConnections()
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, err := dialSSE(context.Background(), &Config{ID: "s", URL: "http://127.0.0.1:1/sse"}); err == nil {
		t.Error("dial to nothing")
	}
	// A POST the server refuses is an error for the sender.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("event: endpoint\ndata: /post\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, err := dialSSE(context.Background(), &Config{ID: "s", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(context.Background(), []byte(`{}`), nil); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("refused POST: %v", err)
	}
	c.SetProtocolVersion("2024-11-05")
}
