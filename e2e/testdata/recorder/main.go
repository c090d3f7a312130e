// Command recorder is the downstream MCP server the exactness tests put
// behind toolgate. It records, byte for byte, every message it receives
// (one JSON line per message in the -record file, the bytes base64), and
// for every tool it runs, the name and the arguments it ran with: so a test
// can check that what a server executed is what toolgate decided.
//
// Two implementations serve the same tools:
//   - -impl mcpgo is a server on mcp-go (its server package), which decodes
//     requests with encoding/json: struct fields bind case-insensitively.
//     Its exec records carry the arguments as mcp-go handed them and as
//     they bind into a struct (BindArguments).
//   - -impl raw reads each message with an exact-key decoder
//     (encoding/json into map[string]any with UseNumber: keys as written,
//     numbers as their literal text) and answers by hand.
//
// Both speak stdio (-stdio) and streamable HTTP (-addr, path /mcp; prints
// "listening ADDR" once it accepts connections). A third, -impl tee -- CMD
// ARGS…, runs a stdio server (server-memory) and records what it is sent.
//
// The tools: read_graph, delete_entities, store {entity_type, text, kind},
// count {n}, echo {…}, slow (runs until cancelled), and leak {how}, which
// hands the credential toolgate gave the server (env RECORDER_SECRET on
// stdio, header X-Recorder-Secret on HTTP) back in a result ("result"), an
// isError result ("toolerror"), a JSON-RPC error ("error"), a log
// notification during the call ("log"), a result with every character of
// it \u-escaped ("escaped"), in structuredContent and _meta ("structured"),
// in an HTTP error's body ("httperror", by hand over HTTP), or in stderr as
// the process dies ("crash"). It also leaks it the ways a reader decodes
// but a textual match misses: as a text that is itself JSON with the
// credential \u-escaped in a value and a key ("jsontext"), and split into
// pieces too short to be recognised alone across text blocks ("split"); in
// a JSON-RPC error ("jsontexterror" in its message; "spliterror" as a list
// of strings in its data, or, on mcp-go, which cannot set data, an isError
// result's blocks) and in a log notification ("jsontextlog", "splitlog",
// its data a list of text blocks).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
)

func main() {
	impl := flag.String("impl", "raw", "mcpgo | raw")
	stdio := flag.Bool("stdio", false, "serve MCP on stdin/stdout")
	addr := flag.String("addr", "127.0.0.1:0", "streamable HTTP listen address (path /mcp)")
	record := flag.String("record", "", "file to append the records to")
	flag.Parse()
	if *record == "" {
		log.Fatal("-record FILE is required")
	}
	rec, err := openRecorder(*record)
	if err != nil {
		log.Fatal(err)
	}
	switch {
	case *impl == "tee":
		err = tee(rec, flag.Args())
	case *impl == "mcpgo" && *stdio:
		err = serveGoStdio(rec)
	case *impl == "mcpgo":
		err = serveHTTP(*addr, rec, goHandler(rec))
	case *stdio:
		err = serveRawStdio(rec)
	default:
		err = serveHTTP(*addr, rec, rawHandler(rec))
	}
	if err != nil {
		log.Fatal(err)
	}
}

// Record is one line of the record file.
type Record struct {
	// Wire is one message exactly as received.
	Wire []byte `json:"wire,omitempty"`
	// Exec names a tool the server ran; Args are its arguments as the
	// implementation read them (mcp-go: the raw arguments it kept; raw:
	// the exact-key decoding, re-encoded); Bound is what mcp-go's
	// BindArguments bound into a struct of the tool's declared fields.
	Exec  string          `json:"exec,omitempty"`
	Args  []byte          `json:"args,omitempty"`
	Bound json.RawMessage `json:"bound,omitempty"`
	// Cancelled names a tool run that ended because it was cancelled.
	Cancelled string `json:"cancelled,omitempty"`
}

type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func openRecorder(path string) (*recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &recorder{f: f}, nil
}

// write appends one record as one line in one write, so a reader never
// sees half of it.
func (r *recorder) write(rec Record) {
	b, err := json.Marshal(rec)
	if err != nil {
		log.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.f.Write(append(b, '\n')); err != nil {
		log.Fatal(err)
	}
}

// Tool schemas, shared by both implementations.
var tools = []struct{ name, schema string }{
	{"read_graph", `{"type":"object","properties":{}}`},
	{"delete_entities", `{"type":"object","properties":{"entityNames":{"type":"array","items":{"type":"string"}}},"required":["entityNames"]}`},
	{"store", `{"type":"object","properties":{"entity_type":{"type":"string"},"text":{"type":"string"},"kind":{"type":"string"}}}`},
	{"count", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`},
	{"echo", `{"type":"object","additionalProperties":true}`},
	{"slow", `{"type":"object","properties":{}}`},
	{"leak", `{"type":"object","properties":{"how":{"type":"string"}},"required":["how"]}`},
}

// storeArgs is what a Go server binds store's arguments into.
type storeArgs struct {
	EntityType string `json:"entity_type"`
	Text       string `json:"text"`
	Kind       string `json:"kind"`
}

// countArgs binds count's n, keeping its literal text.
type countArgs struct {
	N json.Number `json:"n"`
}

// crash dies with the secret in stderr, as a server that prints its
// environment when it fails would.
func crash(secret string) {
	fmt.Fprintf(os.Stderr, "fatal: cannot reach the backend with token %s\n", secret)
	os.Exit(3)
}

// escapeAll writes s as a JSON string with every character \u-escaped.
func escapeAll(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r > 0xffff {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

// jsonText is a JSON document holding secret with every character
// \u-escaped, as a value (in a URL whose slashes are escaped, as PHP's
// encoder writes them) and as a key.
func jsonText(secret string) string {
	esc := escapeAll(secret)
	return `{"url":"https:\/\/backend\/?token=` + esc[1:len(esc)-1] + `",` + esc + `:"key"}`
}

// splitPieces cuts "token " + secret + " end" into pieces of 9 bytes:
// shorter than any slice of a credential redaction recognises alone.
func splitPieces(secret string) []string {
	s := "token " + secret + " end"
	var out []string
	for len(s) > 9 {
		out, s = append(out, s[:9]), s[9:]
	}
	return append(out, s)
}

// splitBlocks is splitPieces as text content blocks.
func splitBlocks(secret string) []any {
	var out []any
	for _, p := range splitPieces(secret) {
		out = append(out, map[string]any{"type": "text", "text": p})
	}
	return out
}

// serveHTTP serves h at /mcp, recording every POST body first.
func serveHTTP(addr string, rec *recorder, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			rec.write(Record{Wire: body})
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	fmt.Printf("listening %s\n", ln.Addr())
	return http.Serve(ln, mux)
}

// teeLines records each line read through it.
type teeLines struct {
	br  *bufio.Reader
	rec *recorder
	buf []byte
}

func (t *teeLines) Read(p []byte) (int, error) {
	if len(t.buf) == 0 {
		line, err := t.br.ReadBytes('\n')
		if len(line) > 0 {
			t.rec.write(Record{Wire: bytes.TrimRight(line, "\r\n")})
			t.buf = line
		}
		if len(t.buf) == 0 {
			return 0, err
		}
	}
	n := copy(p, t.buf)
	t.buf = t.buf[n:]
	return n, nil
}

func stdinLines(rec *recorder) io.Reader {
	return &teeLines{br: bufio.NewReaderSize(os.Stdin, 1<<20), rec: rec}
}

// secretKey carries an HTTP request's X-Recorder-Secret.
type secretKey struct{}

// secretOf is what the server was given as credentials, as one text:
// X-Recorder-Secret and X-Other on HTTP, RECORDER_SECRET and OTHER on
// stdio.
func secretOf(ctx context.Context) string {
	if s, ok := ctx.Value(secretKey{}).(string); ok {
		return s
	}
	return os.Getenv("RECORDER_SECRET") + " and " + os.Getenv("OTHER")
}

func headerSecret(h http.Header) string {
	return h.Get("X-Recorder-Secret") + " and " + h.Get("X-Other")
}

func withSecret(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, secretKey{}, headerSecret(r.Header))
}

// tee runs argv as a stdio MCP server, recording every line sent to it.
// It exits with the server.
func tee(rec *recorder, argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("-impl tee needs the server's command after --")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinLines(rec), os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.ExitCode())
		}
		return err
	}
	return nil
}
