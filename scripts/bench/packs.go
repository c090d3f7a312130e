package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// packCommand is one command of the bench pack, called through the gateway
// and run bare by the bench with the same argv.
type packCommand struct {
	id string
	// args are the call's arguments; argv is the program's, with FILES
	// standing for the directory writeFiles filled.
	args map[string]any
	argv []string
	// want is what the program prints.
	want string
}

// packCommands: echo (what the bench measured before: a program that does
// almost nothing), cat of a 6-byte file (a fast real program) and a jq
// query of a small document (a real program that takes a while to start).
var packCommands = [...]packCommand{
	{id: "echo", args: map[string]any{"text": "hello"}, argv: []string{"echo", "hello"}, want: "hello\n"},
	{id: "cat", argv: []string{"cat", "FILES/small.txt"}, want: "hello\n"},
	{id: "jq", argv: []string{"jq", "-r", ".services[0].name", "FILES/services.json"}, want: "api\n"},
}

// nPack is the number of pack commands.
const nPack = len(packCommands)

// bare is pc's argv with the files directory filled in.
func (pc packCommand) bare(files string) []string {
	out := make([]string, len(pc.argv))
	for i, a := range pc.argv {
		out[i] = strings.ReplaceAll(a, "FILES", files)
	}
	return out
}

// writeFiles writes the pack commands' inputs into dir and returns it.
func writeFiles(dir string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	for name, body := range map[string]string{
		"small.txt":     "hello\n",
		"services.json": `{"services":[{"name":"api","port":8080},{"name":"db","port":5432}]}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	return dir
}

// packYAML is the bench pack's commands as workspace YAML.
func packYAML(files string) string {
	var b strings.Builder
	for _, pc := range packCommands {
		q := make([]string, len(pc.argv))
		for i, a := range pc.bare(files) {
			q[i] = fmt.Sprintf("%q", a)
		}
		a := strings.Join(q, ", ")
		if pc.id == "echo" {
			a = `echo, "{text}"`
		}
		inputs := "{type: object, additionalProperties: false}"
		if pc.args != nil {
			inputs = "{type: object, properties: {text: {type: string}}, required: [text]}"
		}
		fmt.Fprintf(&b, "      - id: %s\n        description: Runs %s.\n        argv: [%s]\n        inputs: %s\n        effects: read\n",
			pc.id, pc.argv[0], a, inputs)
	}
	return b.String()
}

// packCall calls pack command k on cl and checks its output.
func packCall(cl *client.Client, k int) error {
	pc := packCommands[k]
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = pc.id
	if pc.args != nil {
		req.Params.Arguments = pc.args
	} else {
		req.Params.Arguments = map[string]any{}
	}
	res, err := cl.CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) == 0 {
		return fmt.Errorf("%s returned an error result: %v", pc.id, res.Content)
	}
	if tc, ok := res.Content[0].(mcp.TextContent); !ok || strings.TrimSpace(tc.Text) != strings.TrimSpace(pc.want) {
		return fmt.Errorf("%s returned %v, want %q", pc.id, res.Content[0], pc.want)
	}
	return nil
}
