package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Client calls an ACP agent over one connection. It is safe for
// concurrent use.
type Client struct {
	conn *jsonrpc.Conn
}

// New returns a client over conn.
func New(conn *jsonrpc.Conn) *Client { return &Client{conn: conn} }

// Conn returns the connection the client speaks over.
func (c *Client) Conn() *jsonrpc.Conn { return c.conn }

// call sends method and decodes its result into out (nil: ignored).
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	raw, err := c.conn.Call(ctx, method, params)
	if err != nil {
		return wrap(method, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &DecodeError{Method: method, Err: err}
	}
	return nil
}

// Call sends method with params in any version's shape and returns the
// raw answer; an error answer is a *CallError.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := c.conn.Call(ctx, method, params)
	return raw, wrap(method, err)
}

// Initialize performs the handshake.
func (c *Client) Initialize(ctx context.Context, req acpwire.InitializeRequest) (acpwire.InitializeResponse, error) {
	var resp acpwire.InitializeResponse
	err := c.call(ctx, acpwire.MethodInitialize, req, &resp)
	return resp, err
}

// NewSession creates a session.
func (c *Client) NewSession(ctx context.Context, req acpwire.NewSessionRequest) (acpwire.NewSessionResponse, error) {
	var resp acpwire.NewSessionResponse
	err := c.call(ctx, acpwire.MethodSessionNew, req, &resp)
	return resp, err
}

// LoadSession continues a saved session through session/load; the
// runtime replays the conversation as session/update notifications.
func (c *Client) LoadSession(ctx context.Context, req acpwire.LoadSessionRequest) error {
	return c.call(ctx, acpwire.MethodSessionLoad, req, nil)
}

// ResumeSession continues a saved session through session/resume (no
// replay).
func (c *Client) ResumeSession(ctx context.Context, req acpwire.LoadSessionRequest) error {
	return c.call(ctx, acpwire.MethodSessionResume, req, nil)
}

// Continue continues a session through route, session/load or
// session/resume.
func (c *Client) Continue(ctx context.Context, route string, req acpwire.LoadSessionRequest) error {
	switch route {
	case acpwire.MethodSessionLoad:
		return c.LoadSession(ctx, req)
	case acpwire.MethodSessionResume:
		return c.ResumeSession(ctx, req)
	}
	return fmt.Errorf("acpclient: %q is not a continuation method", route)
}

// CloseSession ends a session through session/close.
func (c *Client) CloseSession(ctx context.Context, sessionID string) error {
	return c.call(ctx, acpwire.MethodSessionClose, acpwire.SessionIDParams{SessionID: sessionID}, nil)
}

// DeleteSession ends and removes a session through session/delete.
func (c *Client) DeleteSession(ctx context.Context, sessionID string) error {
	return c.call(ctx, acpwire.MethodSessionDelete, acpwire.SessionIDParams{SessionID: sessionID}, nil)
}

// EndSession ends a session through method, session/close or
// session/delete.
func (c *Client) EndSession(ctx context.Context, method, sessionID string) error {
	if method == acpwire.MethodSessionDelete {
		return c.DeleteSession(ctx, sessionID)
	}
	return c.CloseSession(ctx, sessionID)
}

// Cancel sends the session/cancel notification.
func (c *Client) Cancel(ctx context.Context, sessionID string) error {
	return wrap(acpwire.MethodSessionCancel,
		c.conn.Notify(ctx, acpwire.MethodSessionCancel, acpwire.SessionIDParams{SessionID: sessionID}))
}

// Extension calls a vendor-namespaced ("_"-prefixed) method with empty
// params and returns its raw result.
func (c *Client) Extension(ctx context.Context, method string) (json.RawMessage, error) {
	raw, err := c.conn.Call(ctx, method, struct{}{})
	return raw, wrap(method, err)
}

// Prompt is a session/prompt that was handed to the runtime.
type Prompt struct {
	p *jsonrpc.Pending
}

// SendPrompt hands a prompt to the runtime without waiting for its
// answer; ctx bounds the write only (the turn's acceptance bound).
func (c *Client) SendPrompt(ctx context.Context, req acpwire.PromptRequest) (*Prompt, error) {
	p, err := c.conn.Send(ctx, acpwire.MethodSessionPrompt, req)
	if err != nil {
		return nil, wrap(acpwire.MethodSessionPrompt, err)
	}
	return &Prompt{p: p}, nil
}

// Done is closed once the runtime answered or the connection ended.
func (p *Prompt) Done() <-chan struct{} { return p.p.Done() }

// Answered reports whether Done is closed. Called on the connection's
// reader goroutine, it is exact: the answer is recorded before any later
// line is handled.
func (p *Prompt) Answered() bool {
	select {
	case <-p.p.Done():
		return true
	default:
		return false
	}
}

// Result returns the answer once Done is closed: the decoded response, a
// *CallError, a *DecodeError, or the connection's error.
func (p *Prompt) Result() (acpwire.PromptResponse, error) {
	var resp acpwire.PromptResponse
	raw, err := p.p.Result()
	if err != nil {
		return resp, wrap(acpwire.MethodSessionPrompt, err)
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return resp, &DecodeError{Method: acpwire.MethodSessionPrompt, Err: err}
	}
	return resp, nil
}

// Answer returns the raw answer once Done is closed, for a dialect to
// read: a *CallError, or the connection's error.
func (p *Prompt) Answer() (json.RawMessage, error) {
	raw, err := p.p.Result()
	return raw, wrap(acpwire.MethodSessionPrompt, err)
}

// Forget stops waiting for the answer; a late one is dropped.
func (c *Client) Forget(p *Prompt) { c.conn.Forget(p.p) }

// Reply answers one of the runtime's requests with a result.
func (c *Client) Reply(ctx context.Context, id jsonrpc.ID, result any) error {
	return c.conn.Reply(ctx, id, result)
}

// ReplyError answers one of the runtime's requests with an error whose
// data names the method.
func (c *Client) ReplyError(ctx context.Context, req jsonrpc.Request, code int64, msg string) error {
	data, _ := json.Marshal(map[string]string{"method": req.Method})
	return c.conn.ReplyError(ctx, req.ID, &jsonrpc.Error{Code: code, Message: msg, Data: data})
}

// wrap turns a JSON-RPC error answer into a *CallError; other errors
// pass through.
func wrap(method string, err error) error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return &CallError{Method: method, RPC: rpcErr}
	}
	return err
}

// Steer sends _session/steering and returns the runtime's answer
// (docs/behaviour.md#steering).
func (c *Client) Steer(ctx context.Context, req acpwire.SteerRequest) (acpwire.SteerResponse, error) {
	var resp acpwire.SteerResponse
	err := c.call(ctx, acpwire.MethodSessionSteering, req, &resp)
	return resp, err
}
