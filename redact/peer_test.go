package redact

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// sent records what a Peer passed on.
type sent struct{ msgs []string }

func (s *sent) Send(msg []byte, _ json.RawMessage, _ bool) { s.msgs = append(s.msgs, string(msg)) }

func TestPeer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		msg       string
		droppable bool
		want      string // "" when nothing may be sent
		logged    bool
	}{
		{"clean passes as is", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"hello"}}`, true,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"hello"}}`, false},
		{"a notification is redacted", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"token s3cret-value"}}`, true,
			`[REDACTED:s]`, false},
		{"an unredactable notification is dropped", `{"jsonrpc":"2.0","method":"x","params":{"n":1,"s3cret-value`, true, "", true},
		{"a response that does not parse is not relayed", `{"jsonrpc":"2.0","id":7,"result":{"n":"s3cret-value"},`, false, "", false},
		{"an unredactable response becomes an error", `{"jsonrpc":"2.0","id":8,"result":{"n":31415926}}`, false,
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"the server's message held a credential and was withheld"}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			var out sent
			p := Peer(&out, New(map[string]string{"s": "s3cret-value", "pin": "31415926"}), slog.New(slog.NewTextHandler(&logs, nil)))
			p.Send([]byte(c.msg), nil, c.droppable)
			got := strings.Join(out.msgs, "\n")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("sent %q, want it to hold %q", got, c.want)
			}
			if strings.Contains(got, "s3cret") || strings.Contains(got, "31415926") {
				t.Errorf("a credential was relayed: %s", got)
			}
			if c.logged != strings.Contains(logs.String(), "not relayed") {
				t.Errorf("log %q, want logged=%v", logs.String(), c.logged)
			}
		})
	}
}
