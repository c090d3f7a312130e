package servertest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
)

// TestScriptedHTTP: initialize opens sess-1, notifications are accepted,
// requests are the handler's, GET is refused unless ScriptedHTTPAll.
func TestScriptedHTTP(t *testing.T) {
	t.Parallel()
	url := ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Write([]byte("handled " + m.Method))
	})
	post := func(body string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); resp.Header.Get("Mcp-Session-Id") != "sess-1" || !strings.Contains(body, `"protocolVersion"`) {
		t.Errorf("initialize: %v %s", resp.Header, body)
	}
	if resp, _ := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("notification: %d", resp.StatusCode)
	}
	if _, body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); body != "handled tools/list" {
		t.Errorf("request: %s", body)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
}

// TestGoServer: the mcp-go server answers an initialize over streamable
// HTTP.
func TestGoServer(t *testing.T) {
	t.Parallel()
	_, url := GoServer(t)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"go-peer"`) {
		t.Errorf("initialize: %d %s", resp.StatusCode, b)
	}
}
