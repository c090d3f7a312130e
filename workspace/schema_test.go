package workspace

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/bundled"
)

// schemaURL is where the tests register the generated schema.
const schemaURL = "toolgate:///toolgate.schema.json"

// compiledSchema compiles the generated schema, or its $defs entry def
// when def is not "", with the maintained validator the project uses.
func compiledSchema(t *testing.T, def string) *jsonschema.Schema {
	t.Helper()
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		t.Fatal(err)
	}
	loc := schemaURL
	if def != "" {
		loc += "#/$defs/" + def
	}
	s, err := c.Compile(loc)
	if err != nil {
		t.Fatalf("the generated schema does not compile: %v", err)
	}
	return s
}

// validateYAML validates a YAML document against s as an editor would:
// the document read into the JSON data model.
func validateYAML(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// TestSchemaGolden keeps the schema under testdata, so that a change to
// the workspace types reads as a diff of what editors are told.
func TestSchemaGolden(t *testing.T) {
	t.Parallel()
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/schema.json", b)
}

// TestSchemaValidatesRepositoryWorkspaces: every workspace committed to
// the repository that loads validates against the schema, and so does
// every bundled pack against the schema of a command pack.
func TestSchemaValidatesRepositoryWorkspaces(t *testing.T) {
	t.Parallel()
	root := filepath.Dir(mustAbs(t, "."))
	out, err := exec.Command("git", "-C", root, "ls-files", "*.yaml").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	s := compiledSchema(t, "")
	loaded := 0
	for _, rel := range strings.Fields(string(out)) {
		path := filepath.Join(root, rel)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte("version: 1\n")) && !bytes.Contains(data, []byte("\nversion: 1\n")) {
			continue
		}
		if _, err := Parse(path, data); err != nil {
			continue // a fixture of load errors
		}
		loaded++
		if err := validateYAML(t, s, data); err != nil {
			t.Errorf("%s loads but does not validate against the schema:\n%v", rel, err)
		}
	}
	if loaded < 20 {
		t.Fatalf("only %d workspaces of the repository load; the walk is broken", loaded)
	}
	pack := compiledSchema(t, "CommandPack")
	for _, id := range bundled.IDs() {
		name, data, err := bundled.Source(id)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateYAML(t, pack, data); err != nil {
			t.Errorf("bundled pack %s does not validate against $defs/CommandPack:\n%v", name, err)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSchemaRefusesWhatTheLoaderRefuses: each wrong workspace is refused
// by the loader and by the schema alike.
func TestSchemaRefusesWhatTheLoaderRefuses(t *testing.T) {
	t.Parallel()
	s := compiledSchema(t, "")
	const pack = "command_packs:\n  - id: p\n    commands:\n      - id: c\n        argv: [echo]\n"
	cases := map[string]string{
		"unknown top-level key":     "version: 1\nservers: []\n",
		"unknown nested key":        "version: 1\ngateway:\n  audit: {path: a.jsonl, fsnyc: always}\n",
		"unknown pack key":          "version: 1\ncommand_packs:\n  - id: p\n    comands: []\n",
		"unknown grant key":         "version: 1\n" + pack + "agents:\n  - id: a\n    grants: [{op: tool:p:c, params: {}}]\n",
		"unknown constraint":        "version: 1\n" + pack + "agents:\n  - id: a\n    grants: [{op: tool:p:c, param_constraints: {x: {regex: a}}}]\n",
		"bad tier":                  "version: 1\n" + pack[:len("command_packs:\n  - id: p\n")] + "    permission: lax\n    commands: [{id: c, argv: [echo]}]\n",
		"bad effect":                "version: 1\ncommand_packs:\n  - id: p\n    commands: [{id: c, argv: [echo], effects: readonly}]\n",
		"bad fsync":                 "version: 1\ngateway:\n  audit: {fsync: sometimes}\n",
		"bad transport":             "version: 1\nmcp_servers:\n  - id: s\n    url: http://127.0.0.1:1/mcp\n    transport: websocket\n",
		"bad output parse":          "version: 1\ncommand_packs:\n  - id: p\n    commands: [{id: c, argv: [echo], output: {parse: yaml}}]\n",
		"list where a map is":       "version: 1\ngateway: [listen]\n",
		"string where a list is":    "version: 1\nagents: a\n",
		"string where a bool is":    "version: 1\ngateway:\n  metrics: {open: yes please}\n",
		"duration without a unit":   "version: 1\ngateway:\n  approvals: {wait: 30}\n",
		"zero count":                "version: 1\ngateway:\n  approvals: {max_pending: 0}\n",
		"size with a bad unit":      "version: 1\ngateway:\n  max_body: 1 megabyte\n",
		"zero size":                 "version: 1\ngateway:\n  max_body: 0\n",
		"inline secret":             "version: 1\ngateway:\n  admin_token: hunter2\n",
		"secret with two sources":   "version: 1\ngateway:\n  admin_token: {env: A, file: /b}\n",
		"secret with no source":     "version: 1\ncredentials:\n  c: {}\n",
		"id with a space":           "version: 1\n" + pack + "agents:\n  - id: my agent\n",
		"server id with a colon":    "version: 1\nmcp_servers:\n  - id: a:b\n    command: [srv]\n",
		"no version":                "gateway: {listen: 127.0.0.1:7330}\n",
		"version 2":                 "version: 2\n",
		"agent without an id":       "version: 1\nagents:\n  - grants: []\n",
		"command without argv":      "version: 1\ncommand_packs:\n  - id: p\n    commands: [{id: c}]\n",
		"grant object without op":   "version: 1\n" + pack + "agents:\n  - id: a\n    grants: [{param_constraints: {}}]\n",
		"empty enum constraint":     "version: 1\n" + pack + "agents:\n  - id: a\n    grants: [{op: tool:p:c, param_constraints: {x: {enum: []}}}]\n",
		"negative max_length":       "version: 1\n" + pack + "agents:\n  - id: a\n    grants: [{op: tool:p:c, param_constraints: {x: {max_length: -1}}}]\n",
		"shorthand max of a word":   "version: 1\n" + pack + "agents:\n  - id: a\n    grants: [{op: tool:p:c, param_constraints: {max_x: big}}]\n",
		"approval rule, no agent":   "version: 1\ngateway:\n  approvals: {rules: [{capability: tool:p:c}]}\n",
		"postgres without dsn":      "version: 1\ngateway:\n  state: {postgres: {}}\n",
		"jwt without an issuer":     "version: 1\ngateway:\n  identity: {jwt: {jwks_file: k.json, audience: https://tg.example/mcp}}\n",
		"credentials_ref a mapping": "version: 1\ncredentials: {c: {env: C}}\ncommand_packs:\n  - id: p\n    credentials_ref: {c: 1}\n    commands: [{id: c, argv: [echo]}]\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := Parse("case.yaml", []byte(doc)); err == nil {
				t.Fatalf("the loader accepts it; the case is wrong:\n%s", doc)
			}
			if err := validateYAML(t, s, []byte(doc)); err == nil {
				t.Errorf("the schema accepts what the loader refuses:\n%s", doc)
			}
		})
	}
}

// TestSchemaRequiredIsEnforced: every key the schema marks required is
// one the loader refuses to miss, checked by removing it from a workspace
// that loads; and the table covers every required key of the schema.
func TestSchemaRequiredIsEnforced(t *testing.T) {
	t.Parallel()
	const base = `version: 1
gateway:
  approvals: {rules: [{agent: a, capability: tool:p:c}], notify: {webhook: {url: https://hook.example/h}}}
  operators: [{id: o, token: {env: OP}}]
  state: {postgres: {dsn: {env: PG}}}
  identity: {jwt: {issuer: https://idp.example, jwks_file: k.json, audience: https://tg.example/mcp}}
mcp_servers:
  - id: s
    command: [srv]
command_packs:
  - id: p
    commands:
      - id: c
        argv: [echo]
agents:
  - id: a
    grants: [{op: tool:p:c}]
`
	if _, err := Parse("base.yaml", []byte(base)); err != nil {
		t.Fatalf("the base workspace does not load: %v", err)
	}
	cut := map[string]string{
		"Workspace.version":       "version: 1\n",
		"ApprovalRule.agent":      "agent: a, ",
		"ApprovalRule.capability": ", capability: tool:p:c",
		"Postgres.dsn":            "dsn: {env: PG}",
		"JWT.issuer":              "issuer: https://idp.example, ",
		"JWT.audience":            ", audience: https://tg.example/mcp",
		"MCPServer.id":            "id: s\n    ",
		"Command.id":              "id: c\n        ",
		"Command.argv":            "\n        argv: [echo]",
		"Agent.id":                "id: a\n    ",
		"Grant.op":                "op: tool:p:c",
		"Webhook.url":             "url: https://hook.example/h",
		"Operator.id":             "id: o, ",
	}
	var schema struct {
		Defs map[string]struct {
			Required []string `json:"required"`
		} `json:"$defs"`
		Required []string `json:"required"`
	}
	b, _ := Schema()
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	schema.Defs["Workspace"] = struct {
		Required []string `json:"required"`
	}{schema.Required}
	s := compiledSchema(t, "")
	required := map[string]bool{}
	for def, d := range schema.Defs {
		for _, key := range d.Required {
			required[def+"."+key] = true
		}
	}
	for name := range cut {
		if !required[name] {
			t.Errorf("the loader refuses a workspace without %s, but the schema does not require it; tag it schema:\"required\"", name)
		}
	}
	for def, d := range schema.Defs {
		for _, key := range d.Required {
			name := def + "." + key
			text, ok := cut[name]
			if !ok {
				t.Errorf("the schema requires %s; add a case removing it to this test", name)
				continue
			}
			doc := strings.Replace(base, text, "", 1)
			if doc == base {
				t.Fatalf("%s: %q is not in the base workspace", name, text)
			}
			if _, err := Parse("cut.yaml", []byte(doc)); err == nil {
				t.Errorf("the schema requires %s but the loader accepts a workspace without it", name)
			}
			if err := validateYAML(t, s, []byte(doc)); err == nil {
				t.Errorf("the schema accepts a workspace without %s", name)
			}
		}
	}
}

// TestSchemaScalarFormsAgree: the patterns the duration and size types
// declare accept exactly what their decoders accept.
func TestSchemaScalarFormsAgree(t *testing.T) {
	t.Parallel()
	s := compiledSchema(t, "Gateway")
	samples := []string{"30s", "5m", "1h30m", "1.5h", ".5s", "100ms", "10us", "10µs", "+5s", "30", "5 m", "-5s", "1d", "s", "", "1h-30m"}
	for _, v := range samples {
		doc := "body_timeout: \"" + v + "\"\n"
		_, loadErr := Parse("d.yaml", []byte("version: 1\ngateway:\n  "+doc))
		schemaErr := validateYAML(t, s, []byte(doc))
		if (loadErr == nil) != (schemaErr == nil) {
			t.Errorf("duration %q: loader error %v, schema error %v; they must agree", v, loadErr, schemaErr)
		}
	}
	sizes := []string{"1MiB", "512KiB", "10MB", "1GB", "1GiB", "7B", "1024", " 2 KiB ", "+3KB", "010", "0", "0KiB", "-1", "1.5MiB", "1 megabyte", "1TiB", "MiB", ""}
	for _, v := range sizes {
		doc := "max_body: \"" + v + "\"\n"
		_, loadErr := Parse("s.yaml", []byte("version: 1\ngateway:\n  "+doc))
		schemaErr := validateYAML(t, s, []byte(doc))
		if (loadErr == nil) != (schemaErr == nil) {
			t.Errorf("size %q: loader error %v, schema error %v; they must agree", v, loadErr, schemaErr)
		}
	}
}

// undocumented is a declaration whose field has no description.
type undocumented struct {
	Listen string `yaml:"listen" doc:"Where to listen."`
	Extra  string `yaml:"extra"`
}

// customForm has a YAML decoder of its own and no schema fragment.
type customForm string

func (*customForm) decodeNode(*decoder, *yaml.Node) {}

type withCustomForm struct {
	Form customForm `yaml:"form" doc:"A form the schema cannot see."`
}

// TestSchemaRefusesUndescribedFields: a field added to the workspace types
// without a description, or a custom YAML form without a schema fragment,
// fails the generation, naming it.
func TestSchemaRefusesUndescribedFields(t *testing.T) {
	t.Parallel()
	if _, err := schemaOf(reflect.TypeFor[Workspace]()); err != nil {
		t.Fatalf("the workspace types: %v", err)
	}
	_, err := schemaOf(reflect.TypeFor[undocumented]())
	if err == nil || !strings.Contains(err.Error(), `undocumented.Extra (yaml "extra") has no description`) {
		t.Errorf("undocumented field: got %v", err)
	}
	_, err = schemaOf(reflect.TypeFor[withCustomForm]())
	if err == nil || !strings.Contains(err.Error(), "customForm has its own YAML decoder but declares no schema fragment") {
		t.Errorf("custom form: got %v", err)
	}
}
