package acpclient

import (
	"context"
	"encoding/json"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// InitializeV2 performs a v2 handshake and reads the answer in the shape
// of the version the runtime answered with: a v2 answer is returned as its
// v1 record (InitializeResponseV2.AsV1), any other as v1's own shape, so
// "auto" can go on with a runtime that answers 1.
func (c *Client) InitializeV2(ctx context.Context, req acpwire.InitializeRequestV2) (acpwire.InitializeResponse, error) {
	raw, err := c.conn.Call(ctx, acpwire.MethodInitialize, req)
	if err != nil {
		return acpwire.InitializeResponse{}, wrap(acpwire.MethodInitialize, err)
	}
	var v struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return acpwire.InitializeResponse{}, &DecodeError{Method: acpwire.MethodInitialize, Err: err}
	}
	if v.ProtocolVersion == acpwire.ProtocolVersion2 {
		var r acpwire.InitializeResponseV2
		if err := json.Unmarshal(raw, &r); err != nil {
			return acpwire.InitializeResponse{}, &DecodeError{Method: acpwire.MethodInitialize, Err: err}
		}
		return r.AsV1(), nil
	}
	var r acpwire.InitializeResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, &DecodeError{Method: acpwire.MethodInitialize, Err: err}
	}
	return r, nil
}

// ResumeV2 continues a session through v2's session/resume; with
// ReplayFrom set the runtime replays the conversation before it answers.
func (c *Client) ResumeV2(ctx context.Context, req acpwire.ResumeRequestV2) (acpwire.ContinueSessionResponse, error) {
	return c.continueCall(ctx, acpwire.MethodSessionResume, req)
}

// Accepted returns a v2 prompt's answer once Done is closed: the
// acceptance, a *CallError, a *DecodeError, or the connection's error.
func (p *Prompt) Accepted() (acpwire.PromptAccepted, error) {
	var resp acpwire.PromptAccepted
	raw, err := p.p.Result()
	if err != nil {
		return resp, wrap(acpwire.MethodSessionPrompt, err)
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return resp, &DecodeError{Method: acpwire.MethodSessionPrompt, Err: err}
	}
	return resp, nil
}
