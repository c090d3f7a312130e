package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
)

// pipeAsker adapts the MCP asker of one request (mcpserve.Asker, which
// speaks MCP and knows nothing of the pipeline) to what the pipeline asks
// of a waiting call's caller (callpipe.Asker).
type pipeAsker struct{ mcp *mcpserve.Asker }

// newAsker is the pipeline's asker of the request route of client; token
// is the request's _meta.progressToken as parsed (nil: no progress).
func newAsker(client mcpwire.Client, route json.RawMessage, token any) callpipe.Asker {
	return pipeAsker{mcp: mcpserve.NewAsker(client, route, token)}
}

// Progress implements callpipe.Asker.
func (a pipeAsker) Progress(ctx context.Context, done, total float64, message string) bool {
	return a.mcp.Progress(ctx, done, total, message)
}

// Elicit implements callpipe.Asker: the client's answer as the
// pipeline's, and callpipe.ErrNoElicitation for a client that cannot be
// asked.
func (a pipeAsker) Elicit(ctx context.Context, message string) (callpipe.Answer, error) {
	answer, err := a.mcp.Elicit(ctx, message)
	if errors.Is(err, mcpserve.ErrNoElicitation) {
		err = callpipe.ErrNoElicitation
	}
	switch answer {
	case mcpserve.Approved:
		return callpipe.Approved, err
	case mcpserve.Cancelled:
		return callpipe.Cancelled, err
	}
	return callpipe.Declined, err
}
