package packs

import "sync"

// jobLog keeps the first max bytes of one output stream of a background job
// and counts the rest. Unlike a foreground run's buffers it is read while
// the job still writes, so it is guarded by a mutex.
type jobLog struct {
	mu      sync.Mutex
	max     int64
	buf     []byte
	dropped int64
}

func (l *jobLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	room := l.max - int64(len(l.buf))
	n := int64(len(p))
	if n > room {
		n = max(room, 0)
	}
	l.buf = append(l.buf, p[:n]...)
	l.dropped += int64(len(p)) - n
	return len(p), nil
}

// sizes returns how many bytes are kept and how many were dropped so far.
func (l *jobLog) sizes() (kept, dropped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.buf)), l.dropped
}

// page returns the kept bytes from offset, about limit of them, with the
// edges moved so that no occurrence of a secret straddles one: a page then
// either holds a whole secret, which redaction replaces, or none of it.
// While open (more output may follow) a tail that could be the start of a
// secret is held back for a later page.
func (l *jobLog) page(offset int64, limit int, secrets []string, open bool) (from, to int64, data []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := l.buf
	n := int64(len(buf))
	from = min(max(offset, 0), n)
	to = min(from+int64(limit), n)
	for moved := true; moved; {
		moved = false
		for _, s := range secrets {
			if f := straddle(buf, from, s); f >= 0 && f < from {
				from, moved = f, true
			}
			if f := straddle(buf, to, s); f >= 0 {
				to, moved = f+int64(len(s)), true
			}
		}
	}
	if open && to == n {
		for _, s := range secrets {
			for k := min(len(s)-1, int(to-from)); k > 0; k-- {
				if string(buf[to-int64(k):to]) == s[:k] {
					to -= int64(k)
					break
				}
			}
		}
	}
	return from, to, append([]byte(nil), buf[from:to]...)
}

// straddle returns where an occurrence of s starts that begins before at
// and ends after it, or -1.
func straddle(buf []byte, at int64, s string) int64 {
	ls := int64(len(s))
	for start := max(at-ls+1, 0); start < at; start++ {
		if start+ls <= int64(len(buf)) && start+ls > at && string(buf[start:start+ls]) == s {
			return start
		}
	}
	return -1
}
