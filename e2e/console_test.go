package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath finds the browser scripts/ci-deps/chromium.sh installs.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium on this CI machine; scripts/ci-deps/chromium.sh installs it")
	}
	t.Skip("no Chromium installed; run scripts/ci-deps/chromium.sh")
	return ""
}

// browser starts headless Chromium with a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	// The first action starts the browser, bound to ctx.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// TestConsoleApprovesAWaitingCall drives the operator console in headless
// Chromium: sign in with the admin token, watch a strict call's request
// appear live with its exact arguments and command line, click Approve, and
// see the waiting tool call return its result and the feed show it.
func TestConsoleApprovesAWaitingCall(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	d, _ := approvalsDaemon(t, "90s", "10m")
	cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)

	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.base+"/ui"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), adminToken),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#conn.on")),
	); err != nil {
		t.Fatalf("sign in and connect: %v", err)
	}

	// An earlier call, approved by rule 1, shows in the live feed.
	notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)
	if text, isErr, _, _ := call(t, notes, "append", map[string]any{"text": "buy milk"}); isErr {
		t.Fatalf("rule-approved call: %s", text)
	}
	waitFeed(t, ctx, "command:call:notes:append")

	secret := "gold; rm -rf / <b>not html</b>"
	waiting := callAsync(t, cl, "stash", map[string]any{"item": secret}, nil)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#pending li.approval button.approve"))); err != nil {
		t.Fatalf("the pending call never appeared in the console: %v", err)
	}
	card, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#pending li.approval")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"writer", "command:call:vault:stash", "strict", `"item": "gold; rm -rf / <b>not html</b>"`, argvEcho, "expires in"} {
		if !strings.Contains(card, want) {
			t.Errorf("the approval card does not show %q:\n%s", want, card)
		}
	}
	select {
	case r := <-waiting:
		t.Fatalf("the call returned before approval: %+v", r)
	default:
	}

	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "console.png")
	if p := os.Getenv("TOOLGATE_SCREENSHOT"); p != "" {
		out = p
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the pending approval: %s", out)

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#pending li.approval button.approve"))); err != nil {
		t.Fatal(err)
	}
	got := receive(t, waiting)
	if got.isErr || strings.TrimSpace(got.text) != `["stash","gold; rm -rf / \u003cb\u003enot html\u003c/b\u003e"]` {
		t.Fatalf("the approved call: %+v, want argvecho's output", got)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#no-pending"))); err != nil {
		t.Fatalf("the console did not clear the approved request: %v", err)
	}
	// The operator's "approved" event lands just before the call's own
	// "allow" decision and its "completed" outcome; wait for the last.
	row := waitFeed(t, ctx, "command:call:vault:stash", "approved by operator", "completed")
	if !strings.Contains(row, "completed") || !strings.Contains(row, "approved by operator") {
		t.Errorf("feed row of the executed call = %q, want completed, approved by operator", row)
	}
	if n, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("b"), chromedp.AtLeast(0))); err != nil || len(n) != 0 {
		t.Errorf("arguments were rendered as HTML (%d <b> elements, err %v)", len(n), err)
	}
}

// waitFeed polls the console's live feed until its newest row names action
// (and holds every string in also) and returns that row's text.
func waitFeed(t *testing.T, ctx context.Context, action string, also ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#feed tbody tr:first-child"), chromedp.AtLeast(0)))
		if err == nil && containsAll(text, append([]string{action}, also...)) {
			return text
		}
		last = text
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the live feed never showed %s (newest row: %q)", action, last)
	return ""
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
