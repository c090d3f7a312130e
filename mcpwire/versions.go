package mcpwire

import (
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/strictjson"
)

// Versions of the protocol, by era. A request that declares a modern
// version in its _meta is served statelessly (2026-07-28); anything else
// belongs to an initialize-based session.
const (
	// Modern is the stateless revision toolgate serves.
	Modern = mcp.ProtocolVersion20260728
	// LatestLegacy is the newest session-based revision.
	LatestLegacy = mcp.ProtocolVersion20251125
	// FirstResumable is the first protocol version whose clients resume
	// SSE streams (and parse priming events, which have empty data).
	FirstResumable = mcp.ProtocolVersion20251125
)

// legacyVersions are the session-era versions toolgate speaks, newest
// first: the one list every surface answers initialize from.
var legacyVersions = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20250618, mcp.ProtocolVersion20250326, mcp.ProtocolVersion20241105}

// LegacyVersions returns the session-era versions toolgate answers
// initialize with, newest first; a client asking for another gets the
// newest. The slice is the caller's.
func LegacyVersions() []string { return slices.Clone(legacyVersions) }

// SupportedVersions is every version, newest first, as server/discover and
// UnsupportedProtocolVersionError list them. The slice is the caller's.
func SupportedVersions() []string { return append([]string{Modern}, legacyVersions...) }

// AppendVersionList appends SupportedVersions as a JSON array, the form
// server/discover's supportedVersions and the unsupported-version error's
// data take.
func AppendVersionList(dst []byte) []byte {
	dst = append(dst, '[')
	for i, v := range SupportedVersions() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strictjson.AppendString(dst, v)
	}
	return append(dst, ']')
}

// NegotiateLegacy is the version an initialize asking for requested gets.
func NegotiateLegacy(requested string) string {
	if slices.Contains(legacyVersions, requested) {
		return requested
	}
	return legacyVersions[0]
}

// IsStateless reports whether version is a stateless protocol revision
// (2026-07-28 or later), in which a server sends no requests mid-call.
func IsStateless(version string) bool { return mcp.IsModernProtocol(version) }

// ResumableVersion reports whether a session-era client of version
// resumes SSE streams (2025-11-25 and later, before the stateless era).
func ResumableVersion(version string) bool {
	return version >= FirstResumable && !IsStateless(version)
}

// removedInModern are the methods 2026-07-28 removed: a modern request for
// one is answered Method not found (404 over HTTP), whatever the surface.
var removedInModern = []string{
	"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
	"tasks/result", "tasks/list", "notifications/initialized", "notifications/roots/list_changed",
}

// RemovedInModern reports whether method no longer exists in 2026-07-28.
func RemovedInModern(method string) bool { return slices.Contains(removedInModern, method) }
