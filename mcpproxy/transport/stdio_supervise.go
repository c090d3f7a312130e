package transport

import (
	"os/exec"
	"syscall"

	"github.com/toolgate/toolgate/packs/contain"
)

// startServer starts a stdio server's process: contained by m (package
// contain: its whole tree stops with the session and with the gateway,
// even a gateway killed outright, whatever the server does to its
// parent), or, without a Manager, directly in its own process group.
func startServer(cmd *exec.Cmd, m *contain.Manager) (*contain.Tree, error) {
	if m == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return nil, cmd.Start()
	}
	return m.Start(cmd, 0)
}

// serverExit is the server's own exit, as cmd.Wait would have given it for
// the server run directly: its helper's report when contained; werr (the
// helper's, or the server's when run directly) otherwise.
func serverExit(tree *contain.Tree, werr error) error {
	if tree == nil {
		return werr
	}
	return tree.Exit().Err()
}
