// Package packs turns command-pack declarations into running processes,
// safely: it checks a pack's `requires` against the binaries on PATH,
// substitutes call arguments into a frozen argv template value by value
// (never through a shell), and runs the result in its own process group with
// a clean environment, a timeout and a bounded output, redacting credential
// values from everything it returns.
package packs
