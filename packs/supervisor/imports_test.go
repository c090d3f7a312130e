package supervisor

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// earlyImports are the packages this one may import: each is initialised
// before the heavy part of the binary (or has nothing to initialise and
// sorts before "github.com/toolgate/"), so the supervisor's init runs
// within a millisecond of exec. strings, os/exec (path/filepath),
// encoding/json and x/sys/unix would each make every supervised call wait
// for the protobuf registries, telemetry and JSON Schema set-up first.
var earlyImports = map[string]bool{
	"bytes": true, "errors": true, "fmt": true, "os": true, "os/signal": true, "runtime": true,
	"slices": true, "strconv": true, "syscall": true, "time": true, "unicode/utf8": true, "unsafe": true,
}

func TestImportsInitialiseEarly(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !earlyImports[path] {
				t.Errorf("%s imports %q: the supervisor would start only after what that package waits for (see earlyImports)", name, path)
			}
		}
	}
}
