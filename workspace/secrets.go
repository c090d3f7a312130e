package workspace

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

const inlineSecretHint = "secrets are never written inline; write {env: VARIABLE} or {file: /path/to/secret}"

// jsonSchema is the object decodeNode accepts: exactly one of env and
// file (a bare string, an inline secret, is refused).
func (*SecretRef) jsonSchema(g *schemaGen) schemaNode {
	s := g.ref(secretRefType)
	def := g.defs[secretRefType.Name()].(schemaNode)
	def["oneOf"] = []any{schemaNode{"required": []string{"env"}}, schemaNode{"required": []string{"file"}}}
	return s
}

func (s *SecretRef) decodeNode(d *decoder, n *yaml.Node) {
	s.Pos = d.pos(n) // kept by what follows; set first so a refused secret is placed too
	if n.Kind == yaml.ScalarNode {
		d.errorf(n, "%s", inlineSecretHint)
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "a secret is {env: VARIABLE} or {file: /path/to/secret}, not a %s", kindName(n))
		return
	}
	type plain SecretRef
	var p plain
	d.decodeStruct(n, reflectValue(&p))
	*s = SecretRef(p)
	d.checkSecretRef(n, s)
}

func (*Credential) jsonSchema(g *schemaGen) schemaNode { return (*SecretRef)(nil).jsonSchema(g) }

func (c *Credential) decodeNode(d *decoder, n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		c.Pos = d.pos(n)
		d.errorf(n, "credential: %s", inlineSecretHint)
		return
	}
	var s SecretRef
	s.decodeNode(d, n)
	c.SecretRef = s
}

func (d *decoder) checkSecretRef(n *yaml.Node, s *SecretRef) {
	switch {
	case s.Env == "" && s.File == "":
		d.errorf(n, "a secret needs a source; write {env: VARIABLE} or {file: /path/to/secret}")
	case s.Env != "" && s.File != "":
		d.errorf(n, "a secret has one source; give env or file, not both")
	}
}

// Resolve reads the secret's value from its environment variable or file.
// A missing source is an error naming where it looked, so a gateway never
// starts with an empty secret.
func (s *SecretRef) Resolve(getenv func(string) string) (string, error) {
	switch {
	case s.Env != "":
		v := getenv(s.Env)
		if v == "" {
			return "", fmt.Errorf("%s: environment variable %s is empty or unset; export it before starting toolgate", s.Pos, s.Env)
		}
		return v, nil
	case s.File != "":
		b, err := os.ReadFile(s.File)
		if err != nil {
			return "", fmt.Errorf("%s: read secret file: %w", s.Pos, err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("%s: secret file %s is empty", s.Pos, s.File)
		}
		return v, nil
	}
	return "", fmt.Errorf("%s: secret has no source", s.Pos)
}

// ResolveCredentials reads every declared credential. Values never leave
// the process except through a pack's env or a server's env/headers.
func (ws *Workspace) ResolveCredentials(getenv func(string) string) (map[string]string, error) {
	out := make(map[string]string, len(ws.Credentials))
	var errs []error
	for name, c := range ws.Credentials {
		v, err := c.Resolve(getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("credential %q: %w", name, err))
			continue
		}
		out[name] = v
	}
	return out, errors.Join(errs...)
}

// MinTokenBytes is the shortest bearer token (an agent's, the admin API's)
// a gateway accepts: anything shorter can be guessed or remembered, and a
// token is meant to be generated.
const MinTokenBytes = 16

// CheckToken refuses tok, the value s resolved to, when it is shorter than
// MinTokenBytes, naming what it is (what: "agent \"ci\"'s token"), where
// it is declared and how to make a proper one.
func (s *SecretRef) CheckToken(what, tok string) error {
	if len(tok) >= MinTokenBytes {
		return nil
	}
	src := "environment variable " + s.Env
	if s.File != "" {
		src = "file " + s.File
	}
	return fmt.Errorf("%s: %s (from %s) is %d bytes; a bearer token must be at least %d bytes: generate one with `openssl rand -hex 32` and put it there", s.Pos, what, src, len(tok), MinTokenBytes)
}
