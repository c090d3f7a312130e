package mcpserve

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseEventID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in       string
		num, seq int64
		ok       bool
	}{
		{"0:0", 0, 0, true}, {"12:345", 12, 345, true},
		{"12", 0, 0, false}, {"a:1", 0, 0, false}, {"1:b", 0, 0, false}, {"-1:2", 0, 0, false}, {"1:-2", 0, 0, false}, {"", 0, 0, false},
	}
	for _, c := range cases {
		num, seq, ok := parseEventID(c.in)
		if ok != c.ok || (ok && (num != c.num || seq != c.seq)) {
			t.Errorf("parseEventID(%q) = %d %d %v", c.in, num, seq, ok)
		}
	}
	if id := eventID(3, 4); id != "3:4" {
		t.Errorf("eventID = %q", id)
	}
}

// TestEventLogBounds: a log keeps at most its count and its bytes, oldest
// events going first.
func TestEventLogBounds(t *testing.T) {
	t.Parallel()
	l := newEventLog(5, 3, 1000)
	if l.last() != "5:0" {
		t.Errorf("empty log's last %q", l.last())
	}
	for i := range 5 {
		if id := l.record([]byte{byte('a' + i)}); id != eventID(5, int64(i+1)) {
			t.Errorf("record %d: id %q", i, id)
		}
	}
	got := l.since(0)
	if len(got) != 3 || got[0].seq != 3 || string(got[2].msg) != "e" || l.last() != "5:5" {
		t.Errorf("kept %+v", got)
	}
	if got := l.since(4); len(got) != 1 || got[0].seq != 5 {
		t.Errorf("since 4: %+v", got)
	}
	b := newEventLog(1, 100, 10)
	b.record([]byte("123456"))
	b.record([]byte("7890"))
	b.record([]byte("x"))
	if got := b.since(0); len(got) != 2 || string(got[0].msg) != "7890" {
		t.Errorf("byte bound kept %+v", got)
	}
	if !b.trim(1) || len(b.since(0)) != 1 {
		t.Errorf("trim to 1 byte kept %+v", b.since(0))
	}
	if b.trim(0) {
		t.Error("trim to nothing kept something")
	}
}

func TestPrimingAndRetry(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writePriming(&b, "2:0", 1500*time.Millisecond)
	writeRetry(&b, 0)
	writeSSE(&b, "2:1", []byte(`{"a":1}`))
	want := "id: 2:0\nretry: 1500\ndata: \n\nretry: 1\n\nid: 2:1\nevent: message\ndata: {\"a\":1}\n\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

// TestAttachDetach: detaching starts the grace period, which abandons the
// stream unless a resume attaches first; a released stream cannot be
// attached.
func TestAttachDetach(t *testing.T) {
	t.Parallel()
	st := newStream(1, "1", []byte("1"), newEventLog(1, 10, 1000))
	a, ok := st.attach()
	if !ok {
		t.Fatal("attach")
	}
	abandoned := make(chan struct{})
	st.detach(a, time.Hour, func() { close(abandoned) })
	b, ok := st.attach() // resumes before the grace ends
	if !ok {
		t.Fatal("resume")
	}
	st.detach(b, time.Millisecond, func() { close(abandoned) })
	select {
	case <-abandoned:
	case <-time.After(5 * time.Second):
		t.Fatal("the grace period did not end")
	}
	st.mu.Lock()
	st.released = true
	st.mu.Unlock()
	if _, ok := st.attach(); ok {
		t.Error("attached a released stream")
	}
	// Pauses are for resumable streams only, and taken once.
	old := newStream(2, "2", []byte("2"), nil)
	old.Paused(time.Second)
	if _, ok := old.takePause(); ok || old.isStreamed() {
		t.Error("an old client's stream paused")
	}
	st.Paused(0)
	if d, ok := st.takePause(); !ok || d != time.Millisecond || !st.isStreamed() {
		t.Errorf("pause %v %v", d, ok)
	}
	if _, ok := st.takePause(); ok {
		t.Error("pause taken twice")
	}
	if !strings.HasPrefix(eventID(st.num, 0), "1:") {
		t.Error("eventID")
	}
}
