package acpclient

import (
	"context"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// ListSessions asks for one page of the sessions the runtime keeps.
func (c *Client) ListSessions(ctx context.Context, req acpwire.ListSessionsRequest) (acpwire.ListSessionsResponse, error) {
	var resp acpwire.ListSessionsResponse
	err := c.call(ctx, acpwire.MethodSessionList, req, &resp)
	return resp, err
}

// ForkSession creates a new session from an existing one's history
// through session/fork; the answer has session/new's shape.
func (c *Client) ForkSession(ctx context.Context, req acpwire.ForkSessionRequest) (acpwire.NewSessionResponse, error) {
	var resp acpwire.NewSessionResponse
	err := c.call(ctx, acpwire.MethodSessionFork, req, &resp)
	return resp, err
}
