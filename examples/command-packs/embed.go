// Package commandpacks embeds the command-packs demo workspace and its data,
// so `toolgate demo` runs on a machine that has only the binary and jq.
package commandpacks

import "embed"

// Files holds toolgate.yaml, policy-cases.yaml and the demo's data files.
//
//go:embed toolgate.yaml data/services.json data/notes/todo.md
var Files embed.FS
