// Package packs turns command-pack declarations into running processes,
// safely: it checks a pack's `requires` against the binaries on PATH,
// substitutes call arguments into a frozen argv template value by value
// (never through a shell), opens path_within arguments itself beneath their
// roots and hands the command the open descriptors (/dev/fd/N), confines
// interpreters whose program text the agent writes (jq), and runs the
// result with a clean environment, a timeout, a bounded output and a
// bounded memory, contained (package contain: a cgroup, or a session, of
// its own) so that no process it starts outlives the call whatever it
// does, redacting credential values — and their common encodings — from
// everything it returns.
package packs
