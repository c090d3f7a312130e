// Package contain runs a command so that no process it starts outlives
// it, whatever the process does: setsid, a double fork, SIGTERM ignored, a
// process group of its own, a fork loop, killing its parent. Pack calls,
// background jobs and stdio MCP servers all start through one Manager.
//
// # Decision
//
// Each command starts as the child of a helper: a 728-byte static program
// (testdata/helper_amd64.S) that the gateway keeps in a sealed memfd and
// executes from there. The helper forks; its child sets RLIMIT_AS (soft
// and hard: max_memory) and executes the program, so the bound is in force
// before the program's first instruction with no ptrace and no shim; the
// helper waits and writes the command's wait status on a report pipe.
// Where there is no native helper (another architecture, a memfd that may
// not be executed) the toolgate binary itself, re-executed, does the same
// (package supervisor), at some 30 ms of CPU a call.
//
// The helper and everything below it are held together by, in order of
// preference:
//
//   - a cgroup v2 of their own (ModeCgroup), below the gateway's own
//     cgroup, which the helper is cloned into (CLONE_INTO_CGROUP), so no
//     process of the tree ever runs outside it. Stopping is SIGTERM to
//     every member, the grace period, then cgroup.kill, which kills every
//     member at once, forks in flight included; the tree is gone when
//     cgroup.events says "populated 0". Parentage does not matter, so a
//     command that kills its helper, or the gateway, changes nothing. A
//     cgroup its tree left empty ("populated 0") serves a later tree, one
//     tree at a time, so a call pays no mkdir and no rmdir; one that was
//     killed with cgroup.kill never does (the kernel would kill whatever
//     is cloned into it later) and is removed.
//   - a session of their own (ModeSession), where no cgroup can be made.
//     The tree is the helper's session (no process can join an existing
//     session) plus everything below its members by parent links in
//     /proc. A process that leaves the session and loses its parent link
//     (a double fork; a setsid child of a command that killed its helper)
//     is orphaned, and the gateway is a child subreaper (Options.
//     Subreaper, set by the gateway's binary only): the orphan becomes its
//     child. Any child in another session than the gateway's that is
//     neither a running tree's helper nor the watcher is such an orphan;
//     it is killed with everything below it at once (a scan every 20 ms
//     while trees run, and every look of a stopping tree, so a call ends
//     only once two walks of /proc in a row found neither a process of
//     its tree nor such an orphan: one walk is not atomic) and reaped by
//     its pid only, so
//     processes the gateway starts through os/exec elsewhere — in its own
//     session — are never touched and their reaping never raced.
//
// One watcher per Manager (the toolgate binary re-executed once, package
// supervisor) holds the read end of a pipe only the gateway writes; when
// the gateway dies, even by SIGKILL, it kills the gateway's cgroup subtree
// or the sessions it was told of, and removes the cgroups. A gateway
// starting after one whose watcher died too removes its cgroups.
//
// # Limits
//
//   - A command running as root, or as the gateway's user with write
//     access to the cgroup hierarchy, can move itself out of its cgroup; a
//     command can kill the gateway and its watcher (they run as the same
//     user). Containment is against what a command does to its own tree,
//     not against a command with power over the gateway: run the gateway
//     as a user its commands do not have, or in a container.
//   - In session mode an orphan is killed when it is found (within 20 ms
//     of being orphaned), not at the end of its call: a command that
//     daemonises a helper process it still needs loses it. A process that
//     both leaves its session and is orphaned between two scans after the
//     gateway died escapes (the watcher knows sessions, not such
//     processes). A test binary is never a subreaper, so there a process
//     orphaned out of its session escapes to init.
//   - A gateway under systemd needs Delegate=yes for its cgroup to be its
//     own; without a writable cgroup v2 it uses session mode.
//   - Processes killed in cgroup mode are reparented to init, which reaps
//     their zombies; a zombie is not a running process.
//
// TOOLGATE_CONTAINMENT=cgroup or session forces a mode (diagnosis and
// tests); cgroup then fails the first command where none can be made.
package contain
