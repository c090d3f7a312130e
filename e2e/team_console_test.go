package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTeamConsoleOperatorApprovesForAnHour drives the console in headless
// Chromium as bob, a named operator: the header names him, he approves a
// held call "for 1 hour" (the console's --for), the rule shows under Timed
// rules with his name, the next call of the tool runs without asking, and
// the live feed's "by" column says operator:bob.
func TestTeamConsoleOperatorApprovesForAnHour(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	d, _ := teamDaemon(t, teamOptions{wait: "90s"})
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.base+"/ui"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), bobToken),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#conn.on")),
	); err != nil {
		t.Fatalf("sign in as bob: %v", err)
	}
	waitText(t, ctx, "#who", "signed in as operator:bob")

	notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)
	waiting := callAsync(t, notes, "append", map[string]any{"text": "first"}, nil)
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS("#pending li.approval button.approve")),
		chromedp.SetValue(chromedp.CSS("#pending li.approval select.for"), "1h"),
		chromedp.Click(chromedp.CSS("#pending li.approval button.approve")),
	); err != nil {
		t.Fatalf("approve for 1 hour: %v", err)
	}
	if got := receive(t, waiting); got.isErr {
		t.Fatalf("the approved call: %+v", got)
	}
	waitText(t, ctx, "#rules", "writer may call command:call:notes:append (grant tool:notes:append) without asking — by operator:bob")

	start := time.Now()
	if text, isErr, _, err := call(t, notes, "append", map[string]any{"text": "second"}); err != nil || isErr || time.Since(start) > 5*time.Second {
		t.Fatalf("the next call under bob's rule: %q %v %v after %s", text, isErr, err, time.Since(start))
	}
	row := waitFeed(t, ctx, "command:call:notes:append", "approve --for", "completed")
	if !strings.Contains(row, "operator:bob") {
		t.Errorf("the feed row does not name bob in its by column: %q", row)
	}
}

// waitText polls the console until the element sel's text holds want.
func waitText(t *testing.T, ctx context.Context, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.AtLeast(0)))
		if err == nil && strings.Contains(text, want) {
			return
		}
		last = text
		time.Sleep(100 * time.Millisecond) // polling a condition with a deadline
	}
	t.Fatalf("the console's %s never showed %q (it shows %q)", sel, want, last)
}
