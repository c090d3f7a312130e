package mcpwire

// Era is which protocol eras a downstream server speaks, as the relay's
// probe finds it.
type Era int

// The eras.
const (
	// EraLegacy servers want initialize and sessions (2025-11-25 and
	// earlier).
	EraLegacy Era = iota
	// EraModern servers are stateless (2026-07-28) and speak nothing older.
	EraModern
	// EraDual servers speak both: legacy clients get a session of their
	// own, stateless clients go through the forwarder.
	EraDual
)

func (e Era) String() string {
	switch e {
	case EraModern:
		return Modern + " only"
	case EraDual:
		return Modern + " and earlier"
	}
	return LatestLegacy + " or earlier"
}

// Stateless reports whether stateless requests go to the server as they
// are (it speaks 2026-07-28).
func (e Era) Stateless() bool { return e != EraLegacy }

// EraOf is the era of a server supporting versions, which include a
// stateless one: dual when any of them is a session-era version.
func EraOf(versions []string) Era {
	for _, v := range versions {
		if !IsStateless(v) {
			return EraDual
		}
	}
	return EraModern
}
