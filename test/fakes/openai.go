package fakes

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// NewOpenAI starts a fake of the OpenAI Responses API (what codex calls
// for a model provider with wire_api = "responses"):
//
//   - POST /v1/responses takes the next scripted reply as the Responses
//     event stream, "event: <type>" / "data: <json>" pairs:
//     response.created, response.output_item.added,
//     response.output_text.delta…, response.output_item.done (one message
//     item, then one function_call item for a tool call), and
//     response.completed with the usage figures;
//   - GET /v1/models answers an empty model list.
//
// An HTTP error is answered as {"error":{"message","type","code"}}.
func NewOpenAI() *Server { return newServer("OpenAI", openai{}) }

type openai struct{}

func (openai) classify(r *http.Request, _ []byte) route {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		return routeScripted
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models"):
		return routeOther
	}
	return routeNotFound
}

// openaiRequest is the part of a Responses request the fake reads.
type openaiRequest struct {
	Model string `json:"model"`
}

func (openai) stream(w http.ResponseWriter, r *http.Request, body []byte, reply Reply, n int) {
	var req openaiRequest
	_ = json.Unmarshal(body, &req)
	respID := fmt.Sprintf("resp_fake_%d", n)
	e := startSSE(w)
	response := func(status string, output []obj, usage obj) obj {
		r := obj{"id": respID, "object": "response", "status": status, "model": req.Model, "output": output}
		if usage != nil {
			r["usage"] = usage
		}
		return r
	}
	e.event("response.created", obj{"type": "response.created", "response": response("in_progress", []obj{}, nil)})
	var output []obj
	index := 0
	if len(reply.Text) > 0 {
		msgID := fmt.Sprintf("msg_fake_%d", n)
		e.event("response.output_item.added", obj{"type": "response.output_item.added", "output_index": index,
			"item": obj{"type": "message", "id": msgID, "role": "assistant", "status": "in_progress", "content": []obj{}}})
		for i, t := range reply.Text {
			e.event("response.output_text.delta", obj{"type": "response.output_text.delta",
				"item_id": msgID, "output_index": index, "content_index": 0, "delta": t})
			if i == 0 && !held(r, reply) {
				return
			}
		}
		item := obj{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
			"content": []obj{{"type": "output_text", "text": strings.Join(reply.Text, ""), "annotations": []obj{}}}}
		e.event("response.output_item.done", obj{"type": "response.output_item.done", "output_index": index, "item": item})
		output = append(output, item)
		index++
	}
	if reply.Tool != nil {
		args, _ := json.Marshal(argsOf(reply.Tool))
		callID := reply.Tool.ID
		if callID == "" {
			callID = fmt.Sprintf("call_fake_%d", n)
		}
		item := obj{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d", n), "call_id": callID,
			"name": reply.Tool.Name, "arguments": string(args), "status": "completed"}
		if reply.Tool.Namespace != "" {
			item["namespace"] = reply.Tool.Namespace
		}
		e.event("response.output_item.added", obj{"type": "response.output_item.added", "output_index": index, "item": item})
		e.event("response.output_item.done", obj{"type": "response.output_item.done", "output_index": index, "item": item})
		output = append(output, item)
	}
	u := reply.Usage
	e.event("response.completed", obj{"type": "response.completed", "response": response("completed", output, obj{
		"input_tokens":          u.Input,
		"input_tokens_details":  obj{"cached_tokens": u.Cached},
		"output_tokens":         u.Output + u.Thoughts, // reasoning is part of the output, as OpenAI counts it
		"output_tokens_details": obj{"reasoning_tokens": u.Thoughts},
		"total_tokens":          u.Total(),
	})})
}

func (openai) fail(w http.ResponseWriter, status int, message string) {
	typ := "server_error"
	if status >= 400 && status < 500 {
		typ = "invalid_request_error"
	}
	writeJSON(w, status, obj{"error": obj{"message": message, "type": typ, "code": nil, "param": nil}})
}

func (openai) other(w http.ResponseWriter, _ *http.Request, _ []byte) {
	writeJSON(w, http.StatusOK, obj{"object": "list", "data": []obj{}})
}
