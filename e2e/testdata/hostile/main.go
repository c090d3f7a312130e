// Command hostile is an MCP server (2025-era sessions, raw JSON-RPC, no
// library) that misbehaves on purpose, for the gateway hardening tests.
// It serves stdio (-stdio) or streamable HTTP (-addr, path /mcp).
//
// Tools: echo {text} answers with the length and head of text; pid
// answers the process id; hang never answers; freeze (stdio) answers and
// then never reads stdin again; flood {count} sends count
// notifications/message before answering.
//
// Misbehaviour chosen by flags: -hold-cancelled never answers the HTTP POST
// of a notifications/cancelled (the handler blocks for good); -ignore-term
// ignores SIGTERM, SIGINT and SIGHUP (so only SIGKILL stops it); -pids DIR
// writes an empty file DIR/<pid> at start, so a test can count the
// processes ever started and check which still run; -record FILE appends
// each method received, one per line; -hang-after-init (stdio) answers
// initialize and then never reads stdin again, so its tools/list and
// every call go unanswered while it stays alive.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

type server struct {
	holdCancelled bool
	hangAfterInit bool
	recMu         sync.Mutex
	rec           *os.File
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func main() {
	stdio := flag.Bool("stdio", false, "serve MCP on stdin/stdout")
	addr := flag.String("addr", "", "serve streamable HTTP on this address (path /mcp); prints \"listening ADDR\"")
	hold := flag.Bool("hold-cancelled", false, "HTTP: never answer the POST of notifications/cancelled")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM, SIGINT and SIGHUP")
	pids := flag.String("pids", "", "write an empty file DIR/<pid> at start")
	record := flag.String("record", "", "append each method received to this file")
	hangAfterInit := flag.Bool("hang-after-init", false, "stdio: answer initialize, then never read stdin again (alive, answering nothing)")
	flag.Parse()
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
	if *pids != "" {
		if err := os.WriteFile(filepath.Join(*pids, strconv.Itoa(os.Getpid())), nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	s := &server{holdCancelled: *hold, hangAfterInit: *hangAfterInit}
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s.rec = f
	}
	switch {
	case *stdio:
		s.serveStdio()
	case *addr != "":
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("listening", ln.Addr())
		mux := http.NewServeMux()
		mux.HandleFunc("/mcp", s.serveHTTP)
		fmt.Fprintln(os.Stderr, http.Serve(ln, mux))
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "usage: hostile -stdio | -addr HOST:PORT [flags]")
		os.Exit(2)
	}
}

func (s *server) record(method string) {
	if s.rec == nil || method == "" {
		return
	}
	s.recMu.Lock()
	defer s.recMu.Unlock()
	_, _ = s.rec.WriteString(method + "\n")
}

// answer returns the response to m (nil for none: a notification, or a
// tool that never answers) and what to do after sending it.
func (s *server) answer(m *message, notify func([]byte)) (resp []byte, after string) {
	s.record(m.Method)
	if len(m.ID) == 0 || string(m.ID) == "null" {
		return nil, ""
	}
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.ProtocolVersion == "" {
			p.ProtocolVersion = "2025-06-18"
		}
		return result(m.ID, map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "hostile", "version": "1"}}), ""
	case "ping":
		return result(m.ID, map[string]any{}), ""
	case "tools/list":
		obj := func(props string) json.RawMessage {
			return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
		}
		return result(m.ID, map[string]any{"tools": []any{
			map[string]any{"name": "echo", "description": "Answers with the length and head of text", "inputSchema": obj(`"text":{"type":"string"}`)},
			map[string]any{"name": "pid", "description": "Answers the process id", "inputSchema": obj("")},
			map[string]any{"name": "hang", "description": "Never answers", "inputSchema": obj("")},
			map[string]any{"name": "freeze", "description": "Answers, then never reads stdin again", "inputSchema": obj("")},
			map[string]any{"name": "flood", "description": "Sends count notifications first", "inputSchema": obj(`"count":{"type":"integer"}`)},
		}}), ""
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Text  string `json:"text"`
				Count int    `json:"count"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch p.Name {
		case "echo":
			head := p.Arguments.Text
			if len(head) > 32 {
				head = head[:32]
			}
			return text(m.ID, fmt.Sprintf("%d bytes: %s", len(p.Arguments.Text), head)), ""
		case "pid":
			return text(m.ID, strconv.Itoa(os.Getpid())), ""
		case "hang":
			return nil, "hang"
		case "freeze":
			return text(m.ID, "frozen"), "freeze"
		case "flood":
			for i := range p.Arguments.Count {
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
					"params": map[string]any{"level": "info", "data": fmt.Sprintf("flood %d", i)}})
				notify(b)
			}
			return text(m.ID, fmt.Sprintf("flooded %d", p.Arguments.Count)), ""
		}
		return errResp(m.ID, -32602, "unknown tool "+p.Name), ""
	}
	return errResp(m.ID, -32601, "Method not found: "+m.Method), ""
}

func (s *server) serveStdio() {
	var wmu sync.Mutex
	write := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		_, _ = os.Stdout.Write(append(b, '\n'))
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		resp, after := s.answer(&m, write)
		if resp != nil {
			write(resp)
		}
		if after == "freeze" || (s.hangAfterInit && m.Method == "initialize") {
			blockForever() // never read stdin again; stdin's EOF is never seen
		}
	}
	// stdin closed: a well-behaved stdio server exits here; with
	// -ignore-term the process still exits, as only a frozen one lingers.
}

func (s *server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		// No standalone stream.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return
	}
	var m message
	if json.Unmarshal(buf.Bytes(), &m) != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	if m.Method == "notifications/cancelled" && s.holdCancelled {
		s.record(m.Method)
		blockForever() // the POST is never answered, even after the client leaves
	}
	var notes [][]byte
	resp, after := s.answer(&m, func(b []byte) { notes = append(notes, b) })
	if m.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", "hostile-"+strconv.Itoa(os.Getpid()))
	}
	if after == "hang" {
		<-r.Context().Done()
		return
	}
	if resp == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if len(notes) == 0 {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, n := range append(notes, resp) {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", n)
	}
}

// blockForever never returns; unlike an empty select, a sleeping process
// is not a deadlock the runtime would end.
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func result(id json.RawMessage, v any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": v})
	return b
}

func text(id json.RawMessage, t string) []byte {
	return result(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": t}}})
}

func errResp(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}
