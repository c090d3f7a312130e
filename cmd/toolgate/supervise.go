package main

import "github.com/toolgate/toolgate/packs"

// superviseIfAsked is the hidden re-exec entry point: the gateway starts
// this same binary (argv[0] "toolgate-supervise" or "toolgate-limit-exec")
// between itself and each pack command, to bound the command's memory and
// stop its whole process tree (packs.MaybeSupervise). It returns at once
// for every other invocation, and never when it ran one of them.
func superviseIfAsked() { packs.MaybeSupervise() }
