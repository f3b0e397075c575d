package ports

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acpdrive/acpdrive/domain"
)

// ResultServer arms the result tool of
// docs/behaviour.md#structured-results: an MCP server of the client's
// own, declared beside the session's servers, offering one tool,
// domain.ResultToolName, whose input schema is the session's output
// schema. It is served over stdio (a re-executed binary) or over HTTP
// from the client's own process, whichever the server offers and the
// runtime takes.
type ResultServer interface {
	// Arm prepares the result server of one session for schema (an
	// object schema, compiled by the caller), for a runtime that takes
	// the MCP transports in takes (its initialize answer's
	// mcpCapabilities; stdio is always taken). Every call returns a
	// server of its own. When the server offers no transport the runtime
	// takes, the error is ErrResultNotServed: the caller takes the result
	// from the reply.
	Arm(ctx context.Context, schema json.RawMessage, takes MCPTransports) (ArmedResult, error)
}

// MCPTransports are the MCP transports beside stdio a runtime advertised
// in its initialize answer (mcpCapabilities).
type MCPTransports struct {
	// HTTP is mcpCapabilities.http: MCP's Streamable HTTP transport.
	HTTP bool
	// SSE is mcpCapabilities.sse: MCP's deprecated HTTP+SSE transport.
	SSE bool
}

// ErrResultNotServed is returned by ResultServer.Arm when the server
// offers no transport the runtime takes.
var ErrResultNotServed = errors.New("the result server offers no MCP transport the runtime takes")

// ArmedResult is one session's result server, from Arm to Release.
type ArmedResult interface {
	// Server is the server to declare to the runtime: a stdio server, or
	// an HTTP one (its URL and headers) when the runtime takes HTTP.
	Server() domain.MCPServer
	// Ask says whether the turn now running asks for the result. While
	// it does not, every call of the tool, valid or not, is answered
	// domain.MsgResultNotAsked (a tool error) and nothing is kept. An
	// armed result asks from Arm on until told otherwise.
	Ask(asks bool)
	// Take returns what the tool received since the previous Take, and
	// forgets it: the last valid result (nil when none was submitted),
	// else invalid, the validation errors of the last call that did not
	// validate ("" when there was no call at all).
	Take() (result json.RawMessage, invalid string)
	// Release stops listening and removes whatever Arm created. It is
	// idempotent.
	Release() error
}
