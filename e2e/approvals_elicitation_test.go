package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// elicitor plays the harness's user: it approves stashing gold and
// declines everything else, remembering what it was asked.
type elicitor struct {
	mu    sync.Mutex
	asked []string
}

func (e *elicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	e.asked = append(e.asked, req.Params.Message)
	e.mu.Unlock()
	res := &mcp.ElicitationResult{}
	if strings.Contains(req.Params.Message, `"gold"`) {
		res.Action = mcp.ElicitationResponseActionAccept
		res.Content = map[string]any{"approve": true}
	} else {
		res.Action = mcp.ElicitationResponseActionDecline
	}
	return res, nil
}

// TestElicitationApprover: with approvals.elicitation on and a client that
// declares elicitation (on a protocol version with server requests), a
// stdio instance asks the harness's user directly about a cautious write;
// the answer decides, and is recorded as the elicitation's in the audit.
// A strict call is never put to the caller's own user: it waits for an
// operator.
func TestElicitationApprover(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	y := strings.NewReplacer("ARGVECHO", argvEcho, "WAIT", "3s", "TTL", "10m",
		// vault becomes cautious (without its rule), notes strict.
		"  - id: vault\n    permission: strict", "  - id: vault\n    permission: cautious",
		"      - {agent: writer, capability: \"tool:vault:*\"}\n", "",
		"  - id: notes\n    permission: cautious", "  - id: notes\n    permission: strict",
	).Replace(approvalsWorkspace)
	y = strings.Replace(y, "  approvals:\n", "  approvals:\n    elicitation: true\n", 1)
	ws := writeFile(t, dir, "toolgate.yaml", y)

	user := &elicitor{}
	tr := transport.NewStdio(binary, append(os.Environ(), approvalsEnv...), "serve", "-w", ws, "--agent", "writer", "--stdio", "--surface", "vault")
	cl := client.NewClient(tr, client.WithElicitationHandler(user))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	init := mcp.InitializeRequest{}
	// Server-initiated requests mid-call exist up to protocol 2025-11-25.
	init.Params.ProtocolVersion = "2025-06-18"
	init.Params.ClientInfo = mcp.Implementation{Name: "toolgate-e2e-elicit", Version: "1"}
	init.Params.Capabilities.Elicitation = &mcp.ElicitationCapability{}
	if _, err := cl.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}

	text, isErr, _, err := call(t, cl, "stash", map[string]any{"item": "gold"})
	if err != nil || isErr || strings.TrimSpace(text) != `["stash","gold"]` {
		t.Fatalf("call the user approved: %q isError %v err %v", text, isErr, err)
	}
	text, isErr, _, err = call(t, cl, "stash", map[string]any{"item": "silver"})
	if err != nil || !isErr || !strings.Contains(text, "denied by elicitation: the user declined") {
		t.Errorf("call the user declined: %q isError %v err %v", text, isErr, err)
	}
	// The strict call, from a client that would approve anything.
	ntr := transport.NewStdio(binary, append(os.Environ(), approvalsEnv...), "serve", "-w", ws, "--agent", "writer", "--stdio", "--surface", "notes")
	notesUser := &elicitor{}
	notes := client.NewClient(ntr, client.WithElicitationHandler(notesUser))
	if err := notes.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { notes.Close() })
	if _, err := notes.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	text, isErr, _, err = call(t, notes, "append", map[string]any{"text": "gold"})
	if err != nil || !isErr || !strings.Contains(text, "approval pending") {
		t.Errorf("strict call: %q isError %v err %v, want it pending for an operator", text, isErr, err)
	}
	notesUser.mu.Lock()
	if notesUser.asked != nil {
		t.Errorf("the caller's own user was asked to approve a strict call: %q", notesUser.asked)
	}
	notesUser.mu.Unlock()
	user.mu.Lock()
	if len(user.asked) != 2 || !strings.Contains(user.asked[0], `agent "writer"`) || !strings.Contains(user.asked[0], "command:call:vault:stash") {
		t.Errorf("the user was asked %q", user.asked)
	}
	user.mu.Unlock()

	var byElicitation int
	for _, ev := range auditEvents(t, filepath.Join(dir, "audit.jsonl")) {
		if _, by := approvalOf(ev); ev.Exit != nil && ev.Of != nil && by == "elicitation" {
			byElicitation++
		}
	}
	if byElicitation != 1 {
		t.Errorf("%d executed calls recorded as approved by elicitation, want 1", byElicitation)
	}
}
