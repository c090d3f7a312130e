// Command argvecho prints its arguments (os.Args[1:]) as one JSON array, so
// a test can see exactly which argv elements a process received.
package main

import (
	"encoding/json"
	"os"
)

func main() {
	args := os.Args[1:]
	if args == nil {
		args = []string{}
	}
	if err := json.NewEncoder(os.Stdout).Encode(args); err != nil {
		os.Exit(1)
	}
}
