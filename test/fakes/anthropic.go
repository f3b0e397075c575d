package fakes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// NewAnthropic starts a fake of the Anthropic Messages API (what Claude
// Code calls through ANTHROPIC_BASE_URL):
//
//   - POST /v1/messages takes the next scripted reply: with "stream":true
//     as the Messages event stream (message_start, content_block_start,
//     content_block_delta…, content_block_stop, message_delta with usage,
//     message_stop), otherwise as one Message object;
//   - POST /v1/messages/count_tokens answers a token count;
//   - HEAD / and GET / answer 200 (a connectivity probe).
//
// An HTTP error is answered as {"type":"error","error":{"type","message"}}.
func NewAnthropic() *Server { return newServer("Anthropic", anthropic{}) }

type anthropic struct{}

func (anthropic) classify(r *http.Request, _ []byte) route {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		return routeScripted
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		return routeOther
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && r.URL.Path == "/":
		return routeOther
	}
	return routeNotFound
}

// anthropicRequest is the part of a Messages request the fake reads.
type anthropicRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
}

func (anthropic) stopReason(reply Reply) string {
	if reply.Tool != nil {
		return "tool_use"
	}
	return "end_turn"
}

func (anthropic) toolID(reply Reply, n int) string {
	if reply.Tool.ID != "" {
		return reply.Tool.ID
	}
	return fmt.Sprintf("toolu_fake_%d", n)
}

func (a anthropic) stream(w http.ResponseWriter, r *http.Request, body []byte, reply Reply, n int) {
	var req anthropicRequest
	_ = json.Unmarshal(body, &req)
	msgID := fmt.Sprintf("msg_fake_%d", n)
	if !req.Stream {
		a.message(w, req, reply, msgID, n)
		return
	}
	e := startSSE(w)
	e.event("message_start", obj{"type": "message_start", "message": obj{
		"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
		"content": []obj{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": obj{
			"input_tokens":                reply.Usage.Input,
			"cache_read_input_tokens":     reply.Usage.Cached,
			"cache_creation_input_tokens": 0,
			"output_tokens":               1,
		},
	}})
	index := 0
	if len(reply.Text) > 0 {
		e.event("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "text", "text": ""}})
		for i, t := range reply.Text {
			e.event("content_block_delta", obj{"type": "content_block_delta", "index": index,
				"delta": obj{"type": "text_delta", "text": t}})
			if i == 0 && !held(r, reply) {
				return
			}
		}
		e.event("content_block_stop", obj{"type": "content_block_stop", "index": index})
		index++
	}
	if reply.Tool != nil {
		args, _ := json.Marshal(argsOf(reply.Tool))
		e.event("content_block_start", obj{"type": "content_block_start", "index": index,
			"content_block": obj{"type": "tool_use", "id": a.toolID(reply, n), "name": reply.Tool.Name, "input": obj{}}})
		e.event("content_block_delta", obj{"type": "content_block_delta", "index": index,
			"delta": obj{"type": "input_json_delta", "partial_json": string(args)}})
		e.event("content_block_stop", obj{"type": "content_block_stop", "index": index})
	}
	e.event("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": a.stopReason(reply), "stop_sequence": nil},
		"usage": obj{"output_tokens": reply.Usage.Output}})
	e.event("message_stop", obj{"type": "message_stop"})
}

func (a anthropic) message(w http.ResponseWriter, req anthropicRequest, reply Reply, msgID string, n int) {
	content := []obj{}
	if len(reply.Text) > 0 {
		content = append(content, obj{"type": "text", "text": strings.Join(reply.Text, "")})
	}
	if reply.Tool != nil {
		content = append(content, obj{"type": "tool_use", "id": a.toolID(reply, n), "name": reply.Tool.Name, "input": argsOf(reply.Tool)})
	}
	writeJSON(w, http.StatusOK, obj{
		"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": a.stopReason(reply), "stop_sequence": nil,
		"usage": obj{
			"input_tokens":            reply.Usage.Input,
			"cache_read_input_tokens": reply.Usage.Cached,
			"output_tokens":           reply.Usage.Output,
		},
	})
}

func (anthropic) fail(w http.ResponseWriter, status int, message string) {
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	writeJSON(w, status, obj{"type": "error", "error": obj{"type": typ, "message": message}})
}

func (anthropic) other(w http.ResponseWriter, r *http.Request, _ []byte) {
	if r.URL.Path == "/v1/messages/count_tokens" {
		writeJSON(w, http.StatusOK, obj{"input_tokens": 1})
		return
	}
	w.WriteHeader(http.StatusOK)
}

func argsOf(tc *ToolCall) map[string]any {
	if tc.Args == nil {
		return obj{}
	}
	return tc.Args
}
