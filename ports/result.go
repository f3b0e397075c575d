package ports

import (
	"context"
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
)

// ResultServer arms the result tool of
// docs/behaviour.md#structured-results: a stdio MCP server of the
// client's own, declared beside the session's servers, offering one tool,
// domain.ResultToolName, whose input schema is the session's output
// schema.
type ResultServer interface {
	// Arm prepares the result server of one session for schema (an
	// object schema, compiled by the caller). Every call returns a server
	// of its own.
	Arm(ctx context.Context, schema json.RawMessage) (ArmedResult, error)
}

// ArmedResult is one session's result server, from Arm to Release.
type ArmedResult interface {
	// Server is the stdio server to declare to the runtime.
	Server() domain.MCPServer
	// Take returns the last valid result submitted since the previous
	// Take, and forgets it; ok is false when none was.
	Take() (result json.RawMessage, ok bool)
	// Release stops listening and removes whatever Arm created. It is
	// idempotent.
	Release() error
}
