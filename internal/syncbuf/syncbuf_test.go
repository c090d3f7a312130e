package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestBufferConcurrent: writes from many goroutines while another reads
// all land, whole (run with -race).
func TestBufferConcurrent(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != 800 {
		t.Fatalf("%d lines written, want 800", n)
	}
}
