package packs

import (
	"io"
	"os"
)

// readChunk is the size of each read from a command's pipes; with the caps
// below it is all the memory a run's output needs beyond what it keeps.
const readChunk = 32 << 10

// cappedSink keeps the first limit bytes of a stream in dst and counts the
// rest without storing it. The first byte past the limit (or a failure to
// write dst) closes stop, so the runner can end the process group early.
// It is written by one goroutine and read after that goroutine is done.
type cappedSink struct {
	dst      io.Writer
	limit    int64
	kept     int64
	cut      int64
	writeErr error
	stop     chan struct{}
	stopped  bool
}

func newCappedSink(dst io.Writer, limit int64) *cappedSink {
	return &cappedSink{dst: dst, limit: limit, stop: make(chan struct{})}
}

func (s *cappedSink) Write(p []byte) (int, error) {
	if room := s.limit - s.kept; room > 0 && s.writeErr == nil {
		n := int64(len(p))
		if n > room {
			n = room
		}
		w, err := s.dst.Write(p[:n])
		s.kept += int64(w)
		if err != nil {
			s.writeErr = err
			s.halt()
		}
		p = p[n:]
	}
	if len(p) > 0 {
		s.cut += int64(len(p))
		s.halt()
	}
	return len(p), nil
}

func (s *cappedSink) halt() {
	if !s.stopped {
		s.stopped = true
		close(s.stop)
	}
}

// tailBuffer keeps only the last max bytes written to it.
type tailBuffer struct {
	max   int
	buf   []byte
	total int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if len(t.buf)+len(p) > 2*t.max {
		// Slide the bytes still needed to the front; this happens at most
		// once per max bytes written, so copying stays linear.
		keep := t.buf[len(t.buf)-(t.max-len(p)):]
		t.buf = append(t.buf[:0], keep...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// Bytes returns the last max bytes written.
func (t *tailBuffer) Bytes() []byte {
	if len(t.buf) > t.max {
		return t.buf[len(t.buf)-t.max:]
	}
	return t.buf
}

// pump copies f into w in fixed chunks until f ends or is closed, then
// closes done. w always accepts the bytes (the sinks above never fail).
// The chunk comes from the runner's pool: a call's two pipes would
// otherwise allocate 64 KB, most of it never touched.
func (r *Runner) pump(f *os.File, w io.Writer, done chan<- struct{}) {
	defer close(done)
	buf, _ := r.chunks.Get().(*[]byte)
	if buf == nil {
		b := make([]byte, readChunk)
		buf = &b
	}
	defer r.chunks.Put(buf)
	for {
		n, err := f.Read(*buf)
		if n > 0 {
			w.Write((*buf)[:n])
		}
		if err != nil {
			return
		}
	}
}
