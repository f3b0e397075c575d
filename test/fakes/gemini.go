package fakes

import (
	"fmt"
	"net/http"
	"strings"
)

// NewGemini starts a fake of the Gemini API (the generativelanguage v1beta
// REST surface Gemini CLI calls through GOOGLE_GEMINI_BASE_URL):
//
//   - POST /v1beta/models/<model>:streamGenerateContent?alt=sse takes the
//     next scripted reply, as SSE "data: <GenerateContentResponse>" events;
//   - POST /v1beta/models/<model>:generateContent (utility calls: routing,
//     checks) answers a fixed JSON reply, not scripted;
//   - POST /v1beta/models/<model>:countTokens answers a token count.
//
// An HTTP error is answered as {"error":{"code","message","status"}}.
func NewGemini() *Server { return newServer("Gemini", gemini{}) }

type gemini struct{}

// GeminiModel returns the model a Gemini API path names ("" when none).
func GeminiModel(path string) string {
	rest, ok := strings.CutPrefix(path, "/v1beta/models/")
	if !ok {
		return ""
	}
	model, _, _ := strings.Cut(rest, ":")
	return model
}

func (gemini) classify(r *http.Request, _ []byte) route {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") {
		return routeNotFound
	}
	switch {
	case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		return routeScripted
	case strings.HasSuffix(r.URL.Path, ":generateContent"), strings.HasSuffix(r.URL.Path, ":countTokens"):
		return routeOther
	}
	return routeNotFound
}

func (gemini) usage(u Usage) obj {
	return obj{
		"promptTokenCount":        u.Input,
		"candidatesTokenCount":    u.Output,
		"totalTokenCount":         u.Total(),
		"cachedContentTokenCount": u.Cached,
		"thoughtsTokenCount":      u.Thoughts,
	}
}

func (g gemini) stream(w http.ResponseWriter, r *http.Request, _ []byte, reply Reply, n int) {
	model := GeminiModel(r.URL.Path)
	respID := fmt.Sprintf("fake-gemini-response-%d", n)
	chunk := func(parts []obj, final bool) obj {
		cand := obj{"content": obj{"role": "model", "parts": parts}, "index": 0}
		c := obj{"candidates": []obj{cand}, "modelVersion": model, "responseId": respID}
		if final {
			cand["finishReason"] = "STOP"
			c["usageMetadata"] = g.usage(reply.Usage)
		}
		return c
	}
	e := startSSE(w)
	for i, t := range reply.Text {
		final := reply.Tool == nil && i == len(reply.Text)-1
		e.event("", chunk([]obj{{"text": t}}, final))
	}
	switch {
	case reply.Tool != nil:
		args := reply.Tool.Args
		if args == nil {
			args = obj{}
		}
		e.event("", chunk([]obj{{"functionCall": obj{"name": reply.Tool.Name, "args": args}}}, true))
	case len(reply.Text) == 0:
		e.event("", chunk([]obj{{"text": ""}}, true))
	}
}

func (gemini) fail(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, obj{"error": obj{
		"code":    status,
		"message": message,
		"status":  geminiStatus(status),
	}})
}

// geminiStatus is the google.rpc status name the API pairs with an HTTP
// status.
func geminiStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	default:
		return "INTERNAL"
	}
}

// GeminiUtilityText is the text of every non-streamed generateContent
// answer: a JSON object that reads as "the user speaks next" to a
// next-speaker check and carries a model choice for a router.
const GeminiUtilityText = `{"reasoning":"fake utility answer","next_speaker":"user","model_choice":"pro"}`

func (g gemini) other(w http.ResponseWriter, r *http.Request, _ []byte) {
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		writeJSON(w, http.StatusOK, obj{"totalTokens": 1})
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"candidates": []obj{{
			"content":      obj{"role": "model", "parts": []obj{{"text": GeminiUtilityText}}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": g.usage(Usage{Input: 1, Output: 1}),
		"modelVersion":  GeminiModel(r.URL.Path),
	})
}
