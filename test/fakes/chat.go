package fakes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ChatSideText is the answer every side call gets (see NewChat).
const ChatSideText = "Fake title"

// NewChat starts a fake of the OpenAI Chat Completions API (what Qwen
// Code, opencode's openai-compatible provider and GitHub Copilot CLI's
// BYOK provider call):
//
//   - POST /v1/chat/completions that is streamed and declares tools takes
//     the next scripted reply as a stream of data-only server-sent events:
//     chat.completion.chunk objects (the role, one per text chunk, one per
//     tool call carrying its id, name and whole arguments, then the finish
//     reason "stop" or "tool_calls"), then, when the request asked for it
//     with stream_options.include_usage, a chunk with no choices and the
//     usage figures, then "data: [DONE]";
//   - a side call (a chat completion that is not streamed or declares no
//     tools: titles, classifiers, summaries) takes no scripted reply: it
//     is answered ChatSideText, as one chat.completion object or streamed
//     like a scripted reply, with zero usage;
//   - GET /v1/models (and /models) answers a one-model list.
//
// An HTTP error is answered as {"error":{"message","type","code"}}, with
// the reply's Header (retry-after-ms, retry-after) on the response.
func NewChat() *Server { return newServer("OpenAI Chat Completions", chat{}) }

type chat struct{}

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model         string            `json:"model"`
	Stream        bool              `json:"stream"`
	Tools         []json.RawMessage `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func parseChat(body []byte) chatRequest {
	var req chatRequest
	_ = json.Unmarshal(body, &req)
	return req
}

func isChatPath(p string) bool {
	return p == "/v1/chat/completions" || p == "/chat/completions"
}

func (chat) classify(r *http.Request, body []byte) route {
	switch {
	case r.Method == http.MethodPost && isChatPath(r.URL.Path):
		req := parseChat(body)
		if !req.Stream || len(req.Tools) == 0 {
			return routeOther
		}
		return routeScripted
	case r.Method == http.MethodGet && (strings.HasPrefix(r.URL.Path, "/v1/models") || strings.HasPrefix(r.URL.Path, "/models")):
		return routeOther
	}
	return routeNotFound
}

func (chat) stream(w http.ResponseWriter, r *http.Request, body []byte, reply Reply, n int) {
	req := parseChat(body)
	id := fmt.Sprintf("chatcmpl-fake-%d", n)
	e := startSSE(w)
	chunk := func(delta obj, finish any) obj {
		return obj{"id": id, "object": "chat.completion.chunk", "created": 1764547200, "model": req.Model,
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	e.event("", chunk(obj{"role": "assistant", "content": ""}, nil))
	for i, t := range reply.Text {
		e.event("", chunk(obj{"content": t}, nil))
		if i == 0 && reply.Hold != nil {
			select {
			case <-reply.Hold:
			case <-r.Context().Done():
				return
			}
		}
	}
	if len(reply.Text) == 0 && reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			return
		}
	}
	finish := "stop"
	if reply.Tool != nil {
		args, _ := json.Marshal(argsOf(reply.Tool))
		callID := reply.Tool.ID
		if callID == "" {
			callID = fmt.Sprintf("call_fake_%d", n)
		}
		e.event("", chunk(obj{"tool_calls": []obj{{"index": 0, "id": callID, "type": "function",
			"function": obj{"name": reply.Tool.Name, "arguments": string(args)}}}}, nil))
		finish = "tool_calls"
	}
	e.event("", chunk(obj{}, finish))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		e.event("", obj{"id": id, "object": "chat.completion.chunk", "created": 1764547200, "model": req.Model,
			"choices": []obj{}, "usage": chatUsage(reply.Usage)})
	}
	e.done()
}

// chatUsage renders figures the way OpenAI does: prompt_tokens counts
// the cached ones, completion_tokens the reasoning ones.
func chatUsage(u Usage) obj {
	return obj{
		"prompt_tokens":             u.Input,
		"completion_tokens":         u.Output + u.Thoughts,
		"total_tokens":              u.Total(),
		"prompt_tokens_details":     obj{"cached_tokens": u.Cached},
		"completion_tokens_details": obj{"reasoning_tokens": u.Thoughts},
	}
}

func (chat) fail(w http.ResponseWriter, status int, message string) {
	typ := "server_error"
	if status >= 400 && status < 500 {
		typ = "invalid_request_error"
	}
	writeJSON(w, status, obj{"error": obj{"message": message, "type": typ, "code": nil, "param": nil}})
}

func (chat) other(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, obj{"object": "list", "data": []obj{{"id": "fake-model", "object": "model", "owned_by": "fake"}}})
		return
	}
	req := parseChat(body)
	if req.Stream {
		(chat{}).stream(w, r, body, TextReply(Usage{}, ChatSideText), -1)
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"id": "chatcmpl-fake-side", "object": "chat.completion", "created": 1764547200, "model": req.Model,
		"choices": []obj{{"index": 0, "finish_reason": "stop",
			"message": obj{"role": "assistant", "content": ChatSideText}}},
		"usage": chatUsage(Usage{}),
	})
}
