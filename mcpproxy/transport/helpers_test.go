package transport

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
)

// TestMain runs the tiny stdio server when this test binary is started as
// one (servertest.TinyConfig).
func TestMain(m *testing.M) { servertest.Main(m) }

// dial opens a connection to cfg, closed when the test ends.
func dial(t *testing.T, cfg *Config) Conn {
	t.Helper()
	c, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// request sends a request with id over c (under ctx, which the request
// lives in) and returns the message that answers it; what else arrives
// meanwhile goes to seen, when given, in order.
func request(t *testing.T, ctx context.Context, c Conn, id, method, params string, seen *[]Incoming) Incoming {
	t.Helper()
	send(t, ctx, c, id, method, params)
	return answer(t, c, id, seen)
}

// send sends a request with id over c without waiting for its answer.
func send(t *testing.T, ctx context.Context, c Conn, id, method, params string) {
	t.Helper()
	if params == "" {
		params = "{}"
	}
	msg := (&jsonrpc.Message{ID: json.RawMessage(id), Method: method, Params: json.RawMessage(params)}).Encode()
	if err := c.Send(ctx, msg, json.RawMessage(id)); err != nil {
		t.Fatalf("send %s: %v", method, err)
	}
}

// answer waits for the message answering request id; what else arrives
// meanwhile goes to seen, when given.
func answer(t *testing.T, c Conn, id string, seen *[]Incoming) Incoming {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case in, ok := <-c.Recv():
			if !ok {
				t.Fatalf("connection ended before the answer to %s: %v", id, c.Err())
			}
			if jsonrpc.IsResponseTo(in.Msg, json.RawMessage(id)) {
				return in
			}
			if seen != nil {
				*seen = append(*seen, in)
			}
		case <-deadline:
			t.Fatalf("no answer to %s", id)
		}
	}
}

// initialize plays a session client's handshake on c.
func initialize(t *testing.T, c Conn) {
	t.Helper()
	in := request(t, context.Background(), c, "0", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`, nil)
	c.SetProtocolVersion("2025-11-25")
	if jsonrpc.Field(in.Msg, "result") == nil {
		t.Fatalf("initialize: %s", in.Msg)
	}
	if err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); err != nil {
		t.Fatal(err)
	}
}

// callParams is the params of a tools/call of tool with args (a JSON
// object, "" for none).
func callParams(tool, args string) string {
	if args == "" {
		args = "{}"
	}
	return `{"name":"` + tool + `","arguments":` + args + `}`
}

// modernParams is callParams with the 2026-07-28 _meta a stateless server
// wants.
func modernParams(tool string) string {
	return `{"name":"` + tool + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"toolgate","version":"1"}}}`
}

// tinyConfig describes the tiny stdio server; env adds its switches.
func tinyConfig(id string, env ...string) *Config {
	return &Config{ID: id, Command: servertest.TinyCommand(), Env: servertest.TinyEnv(env...), Timeout: 10 * time.Second}
}
