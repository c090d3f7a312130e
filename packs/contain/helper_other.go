//go:build linux && !amd64

package contain

// nativeHelper is empty where no native helper is built: the portable
// helper (package supervisor, the toolgate binary re-executed) runs
// instead.
const nativeHelper = ""
