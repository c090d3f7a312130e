package gateway

import (
	"crypto/subtle"
	"maps"
	"reflect"
	"slices"

	"github.com/toolgate/toolgate/workspace"
)

// short abbreviates a revision for messages.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// sameCredentials compares credential values in constant time per value.
func sameCredentials(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || subtle.ConstantTimeCompare([]byte(v), []byte(w)) != 1 {
			return false
		}
	}
	return true
}

// restartOnly lists the settings next declares differently from boot (the
// file the process started with) that a reload cannot apply.
func restartOnly(boot, next *workspace.Workspace) []string {
	var out []string
	b, n := boot.Gateway, next.Gateway
	check := func(name string, x, y any) {
		if !sameDecl(x, y) {
			out = append(out, name)
		}
	}
	check("gateway.listen", b.Listen, n.Listen)
	check("gateway.state", b.State, n.State)
	check("gateway.audit", b.Audit, n.Audit)
	check("gateway.admin_token", b.AdminToken, n.AdminToken)
	check("gateway.allowed_origins", b.AllowedOrigins, n.AllowedOrigins)
	check("gateway.max_body", b.MaxBodyBytes, n.MaxBodyBytes)
	check("gateway.body_timeout", b.BodyTimeout, n.BodyTimeout)
	check("gateway.sessions", b.Sessions, n.Sessions)
	check("gateway.streams", b.Streams, n.Streams)
	check("gateway.identity", b.Identity, n.Identity)
	check("gateway.metrics", b.Metrics, n.Metrics)
	check("gateway.approvals.ttl", b.Approvals.TTL, n.Approvals.TTL)
	check("gateway.approvals.max_pending", b.Approvals.MaxPending, n.Approvals.MaxPending)
	check("gateway.approvals.notify", b.Approvals.Notify, n.Approvals.Notify)
	check("gateway.operators", b.Operators, n.Operators)
	check("credentials", boot.Credentials, next.Credentials)
	servers := map[string]*workspace.MCPServer{}
	for _, sv := range boot.MCPServers {
		servers[sv.ID] = sv
	}
	for _, sv := range next.MCPServers {
		was, ok := servers[sv.ID]
		switch {
		case !ok:
			out = append(out, "mcp_servers."+sv.ID+" (added)")
		case !sameDecl(transportOf(was), transportOf(sv)):
			out = append(out, "mcp_servers."+sv.ID+" (transport)")
		}
	}
	return out
}

// transportOf is a server's declaration without what the policy compiles
// (tiers, effects, scopes): how toolgate reaches it. Any field not named
// here counts as transport, so a new one defaults to needing a restart.
func transportOf(sv *workspace.MCPServer) workspace.MCPServer {
	c := *sv
	c.Description, c.Permission, c.PermissionOverrides, c.Effects = "", "", nil, nil
	c.TrustAnnotations, c.Scopes, c.ScopeOverrides = false, nil, nil
	return c
}

// describeChanges names the live parts of the workspace that differ.
func describeChanges(a, b *workspace.Workspace) []string {
	var out []string
	ids := func(n int, id func(int) string) map[string]int {
		m := make(map[string]int, n)
		for i := range n {
			m[id(i)] = i
		}
		return m
	}
	diff := func(kind string, x, y map[string]int, same func(i, j int) bool) {
		for _, id := range slices.Sorted(maps.Keys(y)) {
			i, ok := x[id]
			switch {
			case !ok:
				out = append(out, kind+" "+id+" added")
			case !same(i, y[id]):
				out = append(out, kind+" "+id+" changed")
			}
		}
		for _, id := range slices.Sorted(maps.Keys(x)) {
			if _, ok := y[id]; !ok {
				out = append(out, kind+" "+id+" removed")
			}
		}
	}
	diff("agent", ids(len(a.Agents), func(i int) string { return a.Agents[i].ID }),
		ids(len(b.Agents), func(i int) string { return b.Agents[i].ID }),
		func(i, j int) bool { return sameDecl(a.Agents[i], b.Agents[j]) })
	diff("pack", ids(len(a.CommandPacks), func(i int) string { return a.CommandPacks[i].ID }),
		ids(len(b.CommandPacks), func(i int) string { return b.CommandPacks[i].ID }),
		func(i, j int) bool { return sameDecl(a.CommandPacks[i], b.CommandPacks[j]) })
	diff("server", ids(len(a.MCPServers), func(i int) string { return a.MCPServers[i].ID }),
		ids(len(b.MCPServers), func(i int) string { return b.MCPServers[i].ID }),
		func(i, j int) bool { return sameDecl(a.MCPServers[i], b.MCPServers[j]) })
	ra, rb := a.Gateway.Approvals, b.Gateway.Approvals
	if !sameDecl(ra.Rules, rb.Rules) {
		out = append(out, "approval rules")
	}
	if ra.Wait != rb.Wait || ra.Elicitation != rb.Elicitation {
		out = append(out, "approvals.wait/elicitation")
	}
	return out
}

// sameDecl compares two declarations ignoring where they were written
// (Pos fields, and lists and maps of them), so moving a line is no change.
func sameDecl(a, b any) bool {
	return equalDecl(reflect.ValueOf(a), reflect.ValueOf(b))
}

var posType = reflect.TypeFor[workspace.Pos]()

// positional reports whether t holds nothing but positions.
func positional(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Pointer:
		return positional(t.Elem())
	}
	return t == posType
}

func equalDecl(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalDecl(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if positional(f.Type) {
				continue
			}
			if !equalDecl(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalDecl(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			v := b.MapIndex(it.Key())
			if !v.IsValid() || !equalDecl(it.Value(), v) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() && b.IsNil()
	}
	// Basic kinds; unexported fields are compared by value too.
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	}
	return false
}
