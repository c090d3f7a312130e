package workspace

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGatewayDefaults checks what consumers read through the ...OrDefault
// methods, for a workspace that declares the fields and one that does not.
func TestGatewayDefaults(t *testing.T) {
	t.Parallel()
	declared, err := Load("testdata/valid/new-fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sparse, err := Load("testdata/valid/new-fields-embedded.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bare, err := Parse("dir/bare.yaml", []byte("version: 1\ngateway: {identity: {jwt: {issuer: https://i.example, jwks_file: /etc/jwks.json, audience: https://a.example}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	dg, sg, bg := declared.Gateway, sparse.Gateway, bare.Gateway
	jq := declared.CommandPacks[1]
	bundledPack := declared.CommandPacks[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"max_pending declared", dg.Approvals.MaxPendingOrDefault(), 8},
		{"max_pending default", sg.Approvals.MaxPendingOrDefault(), DefaultMaxPending},
		{"max_per_agent declared", dg.Sessions.MaxPerAgentOrDefault(), 4},
		{"max_per_agent default", sg.Sessions.MaxPerAgentOrDefault(), DefaultSessionsPerAgent},
		{"streams max_per_agent declared", dg.Streams.MaxPerAgentOrDefault(), 4},
		{"streams max_per_agent default", sg.Streams.MaxPerAgentOrDefault(), DefaultStreamsPerAgent},
		{"streams max_total declared", dg.Streams.MaxTotalOrDefault(), 64},
		{"streams max_total default", sg.Streams.MaxTotalOrDefault(), DefaultStreamsTotal},
		{"idle_ttl declared", sg.Sessions.IdleTTLOrDefault(), time.Hour},
		{"idle_ttl default", bg.Sessions.IdleTTLOrDefault(), DefaultSessionIdleTTL},
		{"body_timeout declared", dg.BodyTimeoutOrDefault(), 15 * time.Second},
		{"body_timeout default", sg.BodyTimeoutOrDefault(), DefaultBodyTimeout},
		{"agent_claim declared", dg.Identity.JWT.AgentClaimOrDefault(), "azp"},
		{"agent_claim default", sg.Identity.JWT.AgentClaimOrDefault(), "sub"},
		{"clock_skew declared (the maximum)", dg.Identity.JWT.ClockSkewOrDefault(), MaxClockSkew},
		{"clock_skew default", sg.Identity.JWT.ClockSkewOrDefault(), time.Minute},
		{"metrics closed by default", sg.Metrics.Open, false},
		{"metrics open declared", dg.Metrics.Open, true},
		{"postgres dsn", dg.State.Postgres.DSN.Env, "TOOLGATE_PG_DSN"},
		{"no postgres when undeclared", sg.State.Postgres == nil && bg.State.Postgres == nil, true},
		{"signing key", dg.Audit.SigningKey.File, "audit-signing.key"},
		{"no signing key when undeclared", sg.Audit.SigningKey == nil, true},
		{"state dir declared", sparse.StateDir(), filepath.Join("testdata", "valid", "var", "state")},
		{"state dir default", bare.StateDir(), filepath.Join("dir", ".toolgate")},
		{"jwks_file resolved", sparse.ResolvePath(sg.Identity.JWT.JWKSFile), filepath.Join("testdata", "valid", "jwks.json")},
		{"absolute path kept", bare.ResolvePath(bg.Identity.JWT.JWKSFile), "/etc/jwks.json"},
		{"max_memory", jq.MaxMemory, ByteSize(512 << 20)},
		{"max_memory_overrides", jq.MaxMemoryOverrides["run"], ByteSize(1 << 30)},
		{"program", fmt.Sprint(jq.Commands[0].Program), "[filter]"},
		{"program pos", jq.Commands[0].ProgramPos[0].Line, 50},
		{"bundled max_memory overrides the bundle", bundledPack.MaxMemory, ByteSize(256 << 20)},
		{"bundled max_memory_overrides kept", bundledPack.MaxMemoryOverrides["query"], ByteSize(1 << 30)},
		{"bundled commands still from the bundle", bundledPack.Bundled && len(bundledPack.Commands) == 4, true},
		{"bundled override key pos", bundledPack.KeyPos["max_memory_overrides.query"].Line, 38},
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestWebURLProblem is the attack table for issuer and jwks_url: plain http
// reaches only this machine, and nothing that merely looks local passes.
func TestWebURLProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want string // "" for accepted, else a fragment of the problem
	}{
		{"https://idp.example", ""},
		{"https://idp.example:8443/realms/a", ""},
		{"HTTPS://idp.example", ""},
		{"http://127.0.0.1:8080/realms/test", ""},
		{"http://127.0.0.2", ""},
		{"http://localhost:9000", ""},
		{"http://LocalHost", ""},
		{"http://[::1]:8080/jwks", ""},
		{"http://idp.example", "must use https"},
		{"http://127.0.0.1.nip.io", "must use https"},
		{"http://localhost.evil.example", "must use https"},
		{"http://0.0.0.0:8080", "must use https"},
		{"http://10.0.0.1", "must use https"},
		{"http://[::1%25lo]", "must use https"},
		{"ftp://idp.example", "must be an https URL"},
		{"file:///etc/jwks.json", "is not an absolute URL"},
		{"javascript:alert(1)", "is not an absolute URL"},
		{"https://", "is not an absolute URL"},
		{"//idp.example", "is not an absolute URL"},
		{"idp.example", "is not an absolute URL"},
		{"https://idp.example\n.evil", "is not an absolute URL"},
		{"https://user:pw@idp.example", "must not carry a user name or password"},
		{"http://user@127.0.0.1", "must not carry a user name or password"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			got := webURLProblem(tt.url)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("webURLProblem(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}

// TestJWTChecks runs the JWT block's checks through Parse: boundaries of
// clock_skew, issuer forms, and that a password in a URL is never echoed.
func TestJWTChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fields string
		wantErr      string
	}{
		{"clock_skew at the maximum", "clock_skew: 5m", ""},
		{"clock_skew over the maximum", "clock_skew: 5m1s", "clock_skew 5m1s is more than 5m0s"},
		{"clock_skew zero", "clock_skew: 0s", "is not a positive duration"},
		{"agent_claim", "agent_claim: client_id", ""},
		{"issuer with fragment", "issuer: https://idp.example#x", "must not have a query or fragment"},
		{"issuer with empty query", "issuer: https://idp.example?", "must not have a query or fragment"},
		{"audience urn", "audience: urn:toolgate:prod", ""},
		{"audience with fragment", "audience: https://toolgate.example/mcp#a", "must be an absolute URI without a fragment"},
		{"audience relative", "audience: /mcp", "must be an absolute URI"},
		{"password never echoed", "jwks_url: http://u:s3cr3t-pw@idp.example/jwks", "must not carry a user name or password"},
		{"jwks_url not a string", "jwks_url: [a]", "must be a single value, not a list"},
	}
	base := map[string]string{
		"issuer":   "issuer: https://idp.example",
		"jwks_url": "jwks_url: https://idp.example/jwks",
		"audience": "audience: https://toolgate.example/mcp",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key, _, _ := strings.Cut(tt.fields, ":")
			lines := []string{tt.fields}
			for k, l := range base {
				if k != key {
					lines = append(lines, l)
				}
			}
			src := "version: 1\ngateway:\n  identity:\n    jwt:\n      " + strings.Join(lines, "\n      ") + "\n"
			_, err := Parse("j.yaml", []byte(src))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "j.yaml:5:") {
				t.Errorf("error not at the jwt field's line: %v", err)
			}
			if strings.Contains(err.Error(), "s3cr3t-pw") {
				t.Errorf("error repeats the password: %v", err)
			}
		})
	}
}
