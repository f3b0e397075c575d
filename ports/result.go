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
