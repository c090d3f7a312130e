package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"time"
)

// DefaultWatchEvery is how often WatchWorkspace looks at the file.
const DefaultWatchEvery = 500 * time.Millisecond

// WatchWorkspace reloads the workspace when its file changes, until ctx
// ends. It polls the file's identity and size and time (a stat: no file
// descriptors held, and it follows the symlink swap by which Kubernetes
// updates a mounted ConfigMap); a change is acted on once the file has
// stayed the same for one more look, so an editor's save (truncate and
// write, or write aside and rename into place) is read whole. A file
// whose content equals the revision in force, or the last one refused, is
// not tried again.
func (g *Gateway) WatchWorkspace(ctx context.Context) {
	every := g.watchEvery
	if every <= 0 {
		every = DefaultWatchEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var seen fileStamp // zero: the first look counts as a change
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g.checkLock(false)
		st := stampOf(g.ws.Path)
		if st != seen {
			seen, pending = st, true
			continue
		}
		if !pending {
			continue
		}
		pending = false
		rev := fileRevision(g.ws.Path)
		if rev == g.rev.Load().ws.Revision {
			g.fileRestored(rev)
			continue
		}
		if rev == g.reloads.status().RefusedRevision {
			continue
		}
		_ = g.Reload(ctx, ReloadFile)
	}
}

// fileRestored clears a refused reload once the file is back to the
// revision in force (an operator put the good file back): nothing is
// refused any more, so /admin/status stops showing the old error without a
// SIGHUP. The revision in force is unchanged, so nothing is reloaded.
func (g *Gateway) fileRestored(rev string) {
	g.reloads.run.Lock() // not while a reload is being decided
	defer g.reloads.run.Unlock()
	if g.rev.Load().ws.Revision != rev {
		return
	}
	cleared := ""
	g.reloads.update(func(st *ReloadStatus) {
		if st.Error == "" {
			return
		}
		cleared = st.RefusedRevision
		st.Error, st.RefusedRevision = "", ""
	})
	if cleared != "" {
		g.log.Info("the workspace file is back to the revision in force; the refused reload is cleared",
			"revision", rev, "refused_revision", cleared)
	}
}

// fileStamp is what a stat says about the file.
type fileStamp struct {
	ok    bool
	size  int64
	mtime int64
	ino   uint64
	dev   uint64
}

// fileRevision is the SHA-256 of the file's bytes (what workspace.Load
// calls its revision), or a marker naming why it cannot be read.
func fileRevision(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
