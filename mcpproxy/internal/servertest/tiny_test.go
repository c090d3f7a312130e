package servertest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// TestTinyServer: the test binary re-run with TinyEnv is the tiny server,
// one JSON-RPC message a line; with a switch it changes as documented.
func TestTinyServer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, `"code":-32601`},
		{[]string{"TG_TINY_MODERN=1"}, `"supportedVersions":["2026-07-28"]`},
	} {
		argv := TinyCommand()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = TinyEnv(c.env...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		ask := func(line string) string {
			t.Helper()
			if _, err := in.Write([]byte(line + "\n")); err != nil {
				t.Fatal(err)
			}
			if !sc.Scan() {
				t.Fatalf("no answer to %s: %v", line, sc.Err())
			}
			return sc.Text()
		}
		if got := ask(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`); !strings.Contains(got, `"text":"hi"`) {
			t.Errorf("echo: %s", got)
		}
		if got := ask(`{"jsonrpc":"2.0","id":2,"method":"server/discover"}`); !strings.Contains(got, c.want) {
			t.Errorf("%v discover: %s, want %s", c.env, got, c.want)
		}
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("the tiny server did not exit cleanly at the end of its input: %v", err)
		}
	}
}
