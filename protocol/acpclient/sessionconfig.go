package acpclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// SetConfigOption sets one configuration option and returns every option
// as the runtime answered them.
func (c *Client) SetConfigOption(ctx context.Context, req acpwire.SetConfigOptionRequest) (acpwire.SetConfigOptionResponse, error) {
	var resp acpwire.SetConfigOptionResponse
	err := c.call(ctx, acpwire.MethodSessionSetConfigOption, req, &resp)
	return resp, err
}

// SetMode sets the session's mode through session/set_mode.
func (c *Client) SetMode(ctx context.Context, req acpwire.SetModeRequest) error {
	return c.call(ctx, acpwire.MethodSessionSetMode, req, nil)
}

// SetModel sets the legacy model through session/set_model.
func (c *Client) SetModel(ctx context.Context, req acpwire.SetModelRequest) error {
	return c.call(ctx, acpwire.MethodSessionSetModel, req, nil)
}

// ContinueWith continues a session through route, session/load or
// session/resume, and returns its answer (modes, options, models); an
// answer of another shape is the zero response.
func (c *Client) ContinueWith(ctx context.Context, route string, req acpwire.LoadSessionRequest) (acpwire.ContinueSessionResponse, error) {
	var resp acpwire.ContinueSessionResponse
	switch route {
	case acpwire.MethodSessionLoad, acpwire.MethodSessionResume:
	default:
		return resp, fmt.Errorf("acpclient: %q is not a continuation method", route)
	}
	return c.ContinueCall(ctx, route, req)
}

// ContinueCall sends a continuation call (method and params in any
// version's shape) and reads its answer. The
// answer's content was never part of a continuation's verdict: an answer
// that is no such object (null, {}, anything else) continues the session
// and offers nothing.
func (c *Client) ContinueCall(ctx context.Context, method string, req any) (acpwire.ContinueSessionResponse, error) {
	var resp acpwire.ContinueSessionResponse
	raw, err := c.conn.Call(ctx, method, req)
	if err != nil {
		return resp, wrap(method, err)
	}
	if json.Unmarshal(raw, &resp) != nil {
		resp = acpwire.ContinueSessionResponse{}
	}
	return resp, nil
}
