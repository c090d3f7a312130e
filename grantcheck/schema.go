package grantcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// inputSchema is one tool's input schema, compiled once when the policy is
// built; the library validator alone decides whether arguments conform.
type inputSchema struct {
	lib   *jsonschema.Schema
	raw   json.RawMessage
	props map[string]bool
	// guard refuses keys equal to a declared parameter but for case.
	guard *caseGuard
}

// emptyInputs is the schema of a command that declares no inputs: it takes
// no arguments at all.
const emptyInputs = `{"type":"object","properties":{},"additionalProperties":false}`

// maxSchemaNodes bounds the objects and arrays of one input schema. The
// library's compile time grows with the square of a schema's subschemas
// (20,000 properties take seconds), and a downstream server chooses the
// schemas it lists: the bound keeps a hostile listing from stalling the
// gateway. Real tools' schemas have tens to a few hundred.
const maxSchemaNodes = 4096

// schemaNodes counts the objects and arrays in doc, stopping at limit.
func schemaNodes(doc any, limit int) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n >= limit {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			n++
			for _, e := range v {
				walk(e)
			}
		case []any:
			n++
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	return n
}

// compileSchema compiles raw (JSON) under the resource name url.
func compileSchema(url string, raw []byte) (*inputSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if n := schemaNodes(doc, maxSchemaNodes+1); n > maxSchemaNodes {
		return nil, fmt.Errorf("the schema has more than %d objects and arrays, more than toolgate compiles (compiling grows with their square); a tool that needs more should be split", maxSchemaNodes)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("an input schema must be a JSON object with type: object")
	}
	if t, isString := obj["type"].(string); isString && t != "object" {
		return nil, fmt.Errorf("an input schema must have type: object, not %s", t)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(loadNothing{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	lib, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON Schema: %s", describeLeaves(err, func(loc string) string { return "at /" + loc }))
	}
	s := &inputSchema{lib: lib, raw: json.RawMessage(raw), props: map[string]bool{}, guard: compileCaseGuard(obj, 0)}
	if props, ok := obj["properties"].(map[string]any); ok {
		for k := range props {
			s.props[k] = true
		}
	}
	return s, nil
}

// loadNothing is the compiler's URL loader: a $ref outside the schema is
// refused, whatever its scheme (the library's default reads file: URLs).
// The drafts' metaschemas are built into the library and never loaded.
type loadNothing struct{}

// Load refuses url.
func (loadNothing) Load(url string) (any, error) {
	return nil, fmt.Errorf("a $ref outside the schema (%s) is not loaded", url)
}

// validate checks args against the schema, returning a readable error.
func (s *inputSchema) validate(args map[string]any) error {
	if err := s.guard.check(args, ""); err != nil {
		return err
	}
	if args == nil {
		args = map[string]any{}
	}
	if err := s.lib.Validate(args); err != nil {
		return errors.New(describeValidation(err))
	}
	return nil
}

// describeValidation flattens a validation error of arguments to its leaf
// causes, each naming the argument it concerns.
func describeValidation(err error) string {
	return describeLeaves(err, func(loc string) string { return fmt.Sprintf("argument %q", loc) })
}

// describeLeaves lists the leaf causes of a jsonschema error, located by
// where(instance location) unless at the root, sorted for stable output.
func describeLeaves(err error, where func(loc string) string) string {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		err = se.Err
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return oneLine(err.Error())
	}
	p := message.NewPrinter(language.English)
	var msgs []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		msg := oneLine(e.ErrorKind.LocalizedString(p))
		if len(e.InstanceLocation) > 0 {
			msg = where(strings.Join(e.InstanceLocation, "/")) + ": " + msg
		}
		msgs = append(msgs, msg)
	}
	walk(ve)
	sort.Strings(msgs)
	return strings.Join(msgs, "; ")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// marshalInputs turns a command's YAML inputs into JSON for the compiler.
func marshalInputs(inputs map[string]any) ([]byte, error) {
	if inputs == nil {
		return []byte(emptyInputs), nil
	}
	return json.Marshal(inputs)
}
