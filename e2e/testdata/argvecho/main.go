// Command argvecho prints its arguments as a JSON array, so a test can see
// exactly which argv elements a process received.
package main

import (
	"encoding/json"
	"os"
)

func main() {
	_ = json.NewEncoder(os.Stdout).Encode(os.Args[1:])
}
