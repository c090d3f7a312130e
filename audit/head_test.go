package audit

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/syncbuf"
)

func TestParseAnchor(t *testing.T) {
	t.Parallel()
	good, err := ParseAnchor(" 42:abc123 ")
	if err != nil || good != (Anchor{Seq: 42, Hash: "abc123"}) || good.String() != "42:abc123" {
		t.Fatalf("ParseAnchor: %+v %v", good, err)
	}
	for _, bad := range []string{"", "42", ":abc", "0:abc", "-1:abc", "x:abc", "42:", "42:a:b", "42:a b"} {
		if _, err := ParseAnchor(bad); err == nil || !strings.Contains(err.Error(), "SEQ:HASH") {
			t.Errorf("ParseAnchor(%q): %v, want an error saying SEQ:HASH", bad, err)
		}
	}
}

// plainLog writes n events to a log without a signing key.
func plainLog(t *testing.T, n int, reason string) []byte {
	t.Helper()
	_, data := writeLog(t, Options{}, n, reason)
	return data
}

// TestVerifyAnchoredHead is the attack on an unsigned log's tail: lines
// dropped from the end, the file truncated, or rewritten from scratch all
// verify as a chain — and every one is refused against a head anchored
// before the cut.
func TestVerifyAnchoredHead(t *testing.T) {
	t.Parallel()
	data := plainLog(t, 30, "")
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty tail after the last newline
	rep, err := Verify(bytes.NewReader(bytes.Join(lines[:20], nil)))
	if err != nil {
		t.Fatal(err)
	}
	anchor := Anchor{Seq: rep.LastSeq, Hash: rep.LastHash} // seq 20, as logged then
	// The intact chain holds it, with 10 events after.
	rep, err = VerifyWith(bytes.NewReader(data), VerifyOptions{Head: &anchor})
	if err != nil || !rep.Anchored || rep.AfterAnchor != 10 {
		t.Fatalf("intact chain against its anchor: %+v %v", rep, err)
	}
	cases := map[string][]byte{
		"last lines dropped":      bytes.Join(lines[:15], nil),
		"truncated to zero":       nil,
		"rewritten from scratch":  plainLog(t, 30, "forged"),
		"rewritten, then shorter": plainLog(t, 5, "forged"),
	}
	for name, tampered := range cases {
		if _, err := Verify(bytes.NewReader(tampered)); err != nil {
			t.Fatalf("%s: the chain alone should verify (that is the attack): %v", name, err)
		}
		_, err := VerifyWith(bytes.NewReader(tampered), VerifyOptions{Head: &anchor})
		ve, ok := AsVerifyError(err)
		if !ok || ve.Problem != ProblemAnchor {
			t.Errorf("%s: %v, want an anchored head problem", name, err)
			continue
		}
		if name == "rewritten from scratch" && !strings.Contains(err.Error(), "rewritten") {
			t.Errorf("%s: %v", name, err)
		}
		if name == "last lines dropped" && !strings.Contains(err.Error(), "ends at seq 15, before the anchored head seq 20") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// An anchor the chain never had (a typo in the hash) is a mismatch.
	wrong := Anchor{Seq: 3, Hash: "0000"}
	if _, err := VerifyWith(bytes.NewReader(data), VerifyOptions{Head: &wrong}); err == nil {
		t.Error("a wrong hash for seq 3 verified")
	}
}

// logLines is a slog handler's output, safe for the announcer's timer.
type logLines struct{ syncbuf.Buffer }

// heads returns the anchors logged, with the reason of each.
func (l *logLines) heads(t *testing.T) (anchors []string, reasons []string) {
	t.Helper()
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(l.String())), []byte("\n")) {
		var rec struct {
			Msg, Anchor, At string
		}
		if len(line) == 0 || json.Unmarshal(line, &rec) != nil || rec.Msg != "audit chain head" {
			continue
		}
		anchors, reasons = append(anchors, rec.Anchor), append(reasons, rec.At)
	}
	return anchors, reasons
}

func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHeadAnnounced: without a signing key the head reaches OnHead at
// every commit and the log within HeadLogEvery of moving (and at close);
// a reopened log announces the head it found. Every logged anchor
// verifies against the file.
func TestHeadAnnounced(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var out logLines
	var mu sync.Mutex
	var live []Anchor
	opts := Options{
		Logger:       slog.New(slog.NewJSONHandler(&out, nil)),
		HeadLogEvery: 50 * time.Millisecond,
		OnHead: func(a Anchor, anchored bool) {
			mu.Lock()
			defer mu.Unlock()
			if !anchored {
				live = append(live, a)
			}
		},
	}
	l, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var last Event
	for range 5 {
		last = Event{Agent: "a", Decision: "deny"}
		if err := l.Append(&last); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	got := live[len(live)-1]
	mu.Unlock()
	if got != (Anchor{Seq: 5, Hash: last.Hash}) {
		t.Fatalf("OnHead last heard %v, want 5:%s", got, last.Hash)
	}
	want := Anchor{Seq: 5, Hash: last.Hash}.String()
	waitCond(t, "the head logged within the interval", func() bool {
		a, _ := out.heads(t)
		return len(a) > 0 && a[len(a)-1] == want
	})
	next := Event{Agent: "a", Decision: "deny"}
	if err := l.Append(&next); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	anchors, reasons := out.heads(t)
	if anchors[len(anchors)-1] != (Anchor{Seq: 6, Hash: next.Hash}).String() {
		t.Errorf("the head at close was not logged: %v %v", anchors, reasons)
	}
	for _, a := range anchors {
		anchor, err := ParseAnchor(a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyFileWith(path, VerifyOptions{Head: &anchor}); err != nil {
			t.Errorf("logged anchor %s does not verify: %v", a, err)
		}
	}
	var again logLines
	l, err = Open(path, Options{Logger: slog.New(slog.NewJSONHandler(&again, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if a, r := again.heads(t); len(a) != 1 || a[0] != anchors[len(anchors)-1] || r[0] != "open" {
		t.Errorf("reopened: logged %v %v, want the head it found", a, r)
	}
}

// TestHeadAnnouncedAtCheckpoints: with a signing key the head is logged at
// each checkpoint (not on a timer).
func TestHeadAnnouncedAtCheckpoints(t *testing.T) {
	t.Parallel()
	priv, _ := testKey(t)
	var out logLines
	l, err := Open(filepath.Join(t.TempDir(), "audit.jsonl"), Options{SigningKey: priv, CheckpointEvery: 4,
		Logger: slog.New(slog.NewJSONHandler(&out, nil)), HeadLogEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for range 9 {
		if err := l.Append(&Event{Agent: "a", Decision: "deny"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Checkpoints after seq 4 (seq 5) and 9 (seq 10, shifted by the
	// first), then the closing one.
	anchors, reasons := out.heads(t)
	if len(anchors) != 3 || reasons[0] != "checkpoint" || !strings.HasPrefix(anchors[0], "5:") {
		t.Errorf("logged %v %v, want one per checkpoint", anchors, reasons)
	}
}
