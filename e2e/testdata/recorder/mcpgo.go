package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// newGoServer is the recorder on mcp-go.
func newGoServer(rec *recorder) *server.MCPServer {
	s := server.NewMCPServer("recorder-mcpgo", "1.0.0", server.WithToolCapabilities(false), server.WithLogging())
	for _, t := range tools {
		s.AddTool(mcp.NewToolWithRawSchema(t.name, "recorder tool "+t.name, json.RawMessage(t.schema)), goTool(rec, t.name))
	}
	return s
}

// goTool runs one tool as mcp-go hands it the call, recording the name it
// dispatched on and the arguments it read.
func goTool(rec *recorder, name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := json.Marshal(req.GetRawArguments())
		if raw, ok := req.GetRawArguments().(json.RawMessage); ok {
			args = raw
		}
		r := Record{Exec: req.Params.Name, Args: args}
		switch name {
		case "store":
			var b storeArgs
			_ = req.BindArguments(&b)
			r.Bound, _ = json.Marshal(b)
		case "count":
			var b countArgs
			_ = req.BindArguments(&b)
			r.Bound, _ = json.Marshal(b)
		}
		rec.write(r)
		secret := secretOf(ctx)
		switch name {
		case "slow":
			<-ctx.Done()
			rec.write(Record{Cancelled: name})
			return nil, ctx.Err()
		case "leak":
			switch req.GetString("how", "") {
			case "result":
				return mcp.NewToolResultText("the backend token is " + secret), nil
			case "structured":
				r := mcp.NewToolResultStructured(map[string]any{"token": secret}, "see structuredContent")
				r.Meta = mcp.NewMetaFromMap(map[string]any{"token": secret})
				return r, nil
			case "toolerror":
				return mcp.NewToolResultError("backend refused token " + secret), nil
			case "error":
				return nil, errors.New("backend refused token " + secret)
			case "log", "jsontextlog", "splitlog":
				data := map[string]any{"log": "token " + secret, "jsontextlog": jsonText(secret), "splitlog": splitBlocks(secret)}[req.GetString("how", "")]
				_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message",
					map[string]any{"level": "error", "logger": "recorder", "data": data})
				return mcp.NewToolResultText("logged"), nil
			case "jsontext":
				return mcp.NewToolResultText(jsonText(secret)), nil
			case "split", "spliterror":
				var content []mcp.Content
				for _, p := range splitPieces(secret) {
					content = append(content, mcp.NewTextContent(p))
				}
				return &mcp.CallToolResult{Content: content, IsError: req.GetString("how", "") == "spliterror"}, nil
			case "jsontexterror":
				return nil, errors.New(jsonText(secret))
			case "crash":
				crash(secret)
			}
			return mcp.NewToolResultError("unknown how"), nil
		}
		return mcp.NewToolResultText(string(args)), nil
	}
}

func serveGoStdio(rec *recorder) error {
	return server.NewStdioServer(newGoServer(rec)).Listen(context.Background(), stdinLines(rec), os.Stdout)
}

func goHandler(rec *recorder) http.Handler {
	return server.NewStreamableHTTPServer(newGoServer(rec), server.WithHTTPContextFunc(withSecret))
}
