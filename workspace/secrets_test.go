package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env is a getenv over a fixed map, so tests never touch the process
// environment.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSecretRefResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withNewline := write("nl", "s3cret\n")
	withCRLF := write("crlf", "s3cret\r\n")
	inner := write("inner", "two\nlines\n")
	empty := write("empty", "\n")
	pos := Pos{File: "ws.yaml", Line: 4, Col: 7}
	getenv := env(map[string]string{"TOKEN": "abc", "EMPTY": ""})
	tests := []struct {
		name    string
		ref     SecretRef
		want    string
		wantErr []string
	}{
		{name: "env", ref: SecretRef{Env: "TOKEN"}, want: "abc"},
		{name: "env unset", ref: SecretRef{Pos: pos, Env: "MISSING"}, wantErr: []string{"ws.yaml:4:7", "MISSING", "export it"}},
		{name: "env empty", ref: SecretRef{Pos: pos, Env: "EMPTY"}, wantErr: []string{"EMPTY is empty or unset"}},
		{name: "file with newline", ref: SecretRef{File: withNewline}, want: "s3cret"},
		{name: "file with CRLF", ref: SecretRef{File: withCRLF}, want: "s3cret"},
		{name: "file keeps inner newlines", ref: SecretRef{File: inner}, want: "two\nlines"},
		{name: "file empty", ref: SecretRef{Pos: pos, File: empty}, wantErr: []string{"ws.yaml:4:7", "is empty"}},
		{name: "file missing", ref: SecretRef{Pos: pos, File: filepath.Join(dir, "nope")}, wantErr: []string{"ws.yaml:4:7", "read secret file", "no such file"}},
		{name: "no source", ref: SecretRef{Pos: pos}, wantErr: []string{"ws.yaml:4:7: secret has no source"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.ref.Resolve(getenv)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Resolve = %q, want an error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Resolve = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestResolveCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "db")
	if err := os.WriteFile(secretFile, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "version: 1\ncredentials:\n  gh: {env: GH_TOKEN}\n  db: {file: " + secretFile + "}\n  api: {env: API_KEY}\n"
	ws, err := Parse("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if ws.Credentials["api"].Name != "api" || ws.Credentials["api"].Pos.Line != 5 {
		t.Errorf("credential api = %+v, want its name and line 5", ws.Credentials["api"])
	}
	got, err := ws.ResolveCredentials(env(map[string]string{"GH_TOKEN": "ghp"}))
	if err == nil || !strings.Contains(err.Error(), `credential "api": c.yaml:5:8: environment variable API_KEY is empty or unset`) {
		t.Errorf("error = %v, want the unset API_KEY named with its position", err)
	}
	if strings.Contains(err.Error(), "ghp") || strings.Contains(err.Error(), "pw") {
		t.Errorf("error leaks a secret value: %v", err)
	}
	if len(got) != 2 || got["gh"] != "ghp" || got["db"] != "pw" {
		t.Errorf("resolved = %v, want gh and db", got)
	}
	all, err := ws.ResolveCredentials(env(map[string]string{"GH_TOKEN": "ghp", "API_KEY": "k"}))
	if err != nil || len(all) != 3 {
		t.Errorf("ResolveCredentials = %v, %v; want three values", all, err)
	}
}

func TestCheckToken(t *testing.T) {
	t.Parallel()
	env := &SecretRef{Env: "CI_TOKEN", Pos: Pos{File: "w.yaml", Line: 6, Col: 12}}
	file := &SecretRef{File: "/run/secrets/ci", Pos: Pos{File: "w.yaml", Line: 7, Col: 12}}
	for _, tc := range []struct {
		ref  *SecretRef
		tok  string
		want string
	}{
		{env, strings.Repeat("a", MinTokenBytes), ""},
		{env, "x", `w.yaml:6:12: agent "ci"'s token (from environment variable CI_TOKEN) is 1 bytes; a bearer token must be at least 16 bytes: generate one with ` + "`openssl rand -hex 32`"},
		{file, strings.Repeat("é", 7), `w.yaml:7:12: agent "ci"'s token (from file /run/secrets/ci) is 14 bytes`},
	} {
		err := tc.ref.CheckToken(`agent "ci"'s token`, tc.tok)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckToken(%q) = %v, want %q", tc.tok, err, tc.want)
		}
	}
}
