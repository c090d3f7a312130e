package transport

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
)

// recvWithin returns the next message c delivers, failing after 5s.
func recvWithin(t *testing.T, c Conn) Incoming {
	t.Helper()
	select {
	case in := <-c.Recv():
		return in
	case <-time.After(5 * time.Second):
		t.Fatal("nothing delivered")
	}
	return Incoming{}
}

const listenParams = `{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`

// TestNDJSONStream: a subscriptions/listen answered under application/json
// with the body kept open, one JSON message a line (as the conformance
// suite's reference server does), is delivered frame by frame while the
// body stays open; the server ending it fails the request; the request
// ending (the client went away) ends the server's response.
func TestNDJSONStream(t *testing.T) {
	t.Parallel()
	next := make(chan string)
	gone := make(chan struct{}, 1)
	url := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(m.ID) + `}}}` + "\n"))
		w.(http.Flusher).Flush()
		for {
			select {
			case line, ok := <-next:
				if !ok {
					return // the server ends the stream
				}
				w.Write([]byte(line + "\n"))
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				gone <- struct{}{}
				return
			}
		}
	})
	c := dial(t, (&Config{ID: "ref", URL: url, Timeout: 5 * time.Second}).Stateless())

	send(t, context.Background(), c, "1", "subscriptions/listen", listenParams)
	if ack := recvWithin(t, c); !strings.Contains(string(ack.Msg), "subscriptions/acknowledged") || string(ack.Via) != "1" {
		t.Fatalf("first frame %s via %s, want the acknowledgement while the body is open", ack.Msg, ack.Via)
	}
	next <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`
	if ch := recvWithin(t, c); !strings.Contains(string(ch.Msg), "tools/list_changed") || string(ch.Via) != "1" {
		t.Fatalf("second frame %s via %s", ch.Msg, ch.Via)
	}
	close(next)
	if end := recvWithin(t, c); !jsonrpc.IsResponseTo(end.Msg, []byte("1")) || !strings.Contains(string(end.Msg), "closed the response without answering") {
		t.Fatalf("after the server ended the stream: %s", end.Msg)
	}

	next = make(chan string)
	ctx, cancel := context.WithCancel(context.Background())
	send(t, ctx, c, "2", "subscriptions/listen", listenParams)
	recvWithin(t, c)
	cancel()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's end did not end the server's stream")
	}
	select {
	case in := <-c.Recv():
		t.Errorf("delivered after the request ended: %s", in.Msg)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestNDJSONShapes: what an application/json body may hold — one message
// over several lines, messages back to back without a newline, a
// notification line before the answer line, a batch — is taken message by
// message, the answer last.
func TestNDJSONShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		before     int
	}{
		{"pretty", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": ID,\n  \"result\": {\"ok\": true}\n}\n", 0},
		{"back to back", `{"jsonrpc":"2.0","method":"notifications/message","params":{}}{"jsonrpc":"2.0","id":ID,"result":{"ok":true}}`, 1},
		{"answer first", `{"jsonrpc":"2.0","id":ID,"result":{"ok":true}}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n", 1},
		{"progress then answer", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":50}}` + "\n" + `{"jsonrpc":"2.0","id":ID,"result":{"ok":true}}`, 1},
		{"batch lines", `[{"jsonrpc":"2.0","method":"notifications/message","params":{}}]` + "\n" + `[{"jsonrpc":"2.0","id":ID,"result":{"ok":true}}]`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(strings.ReplaceAll(tc.body, "ID", string(m.ID))))
			})
			c := dial(t, (&Config{ID: "s", URL: url, Timeout: 5 * time.Second}).Stateless())
			var seen []Incoming
			in := request(t, context.Background(), c, "1", "tools/call", modernParams("x"), &seen)
			if !strings.Contains(string(in.Msg), `"ok"`) || len(seen) != tc.before {
				t.Errorf("answer %s after %d messages, want %d", in.Msg, len(seen), tc.before)
			}
		})
	}
}

// TestNDJSONHostile: a stream that is not JSON, a frame over the bound on
// one endless line, or a flood of whitespace fails the request with what
// went wrong, bounded by the message limit (not read to the end).
func TestNDJSONHostile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, want string
		write      func(w http.ResponseWriter)
	}{
		{"garbage after a frame", "the answer is not JSON", func(w http.ResponseWriter) {
			w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n<html>oops</html>\n"))
		}},
		{"endless line", "answer larger than 1024 bytes", func(w http.ResponseWriter) {
			w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`))
			for range 1000 {
				if _, err := w.Write([]byte(strings.Repeat("x", 1024))); err != nil {
					return
				}
			}
		}},
		{"whitespace flood", "answer larger than 1024 bytes", func(w http.ResponseWriter) {
			for range 1000 {
				if _, err := w.Write([]byte(strings.Repeat("\n", 1024))); err != nil {
					return
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
				w.Header().Set("Content-Type", "application/json")
				tc.write(w)
			})
			c := dial(t, (&Config{ID: "h", URL: url, MaxMessage: 1024, Timeout: 5 * time.Second}).Stateless())
			in := request(t, context.Background(), c, "1", "tools/call", modernParams("x"), nil)
			if e := jsonrpc.ParseError(jsonrpc.Field(in.Msg, "error")); e.Code != jsonrpc.CodeUnavailable || !strings.Contains(e.Message, tc.want) || !strings.Contains(e.Message, `server "h"`) {
				t.Errorf("answer %s, want %q naming the server", in.Msg, tc.want)
			}
		})
	}
}
