package fakes

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Name string
	Data map[string]any
}

// post sends a JSON body and returns the response.
func post(t *testing.T, u, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readSSE parses a whole event stream.
func readSSE(t *testing.T, resp *http.Response) []sseEvent {
	t.Helper()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != nil {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data), line)
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// jsonBody decodes a JSON response body.
func jsonBody(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v), "%s", raw)
	return v
}

// at walks a decoded JSON value by keys and indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestServersListenOnLoopbackOnPortsOfTheirOwn(t *testing.T) {
	a, b, c := NewGemini(), NewAnthropic(), NewOpenAI()
	defer a.Close()
	defer b.Close()
	defer c.Close()
	ports := map[string]bool{}
	for _, s := range []*Server{a, b, c} {
		u, err := url.Parse(s.URL())
		require.NoError(t, err)
		assert.Equal(t, "127.0.0.1", u.Hostname())
		ports[u.Port()] = true
	}
	assert.Len(t, ports, 3)
}

func TestGeminiStreamsText(t *testing.T) {
	s := NewGemini().Script(TextReply(Usage{Input: 10, Output: 3, Cached: 2, Thoughts: 1}, "Hel", "lo"))
	defer s.Close()
	resp := post(t, s.URL()+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, map[string]string{"x-goog-api-key": "k"})
	events := readSSE(t, resp)
	require.Len(t, events, 2)
	for _, e := range events {
		assert.Empty(t, e.Name, "data-only events")
		assert.Equal(t, "gemini-2.5-pro", e.Data["modelVersion"])
		assert.Equal(t, "model", at(e.Data, "candidates", 0, "content", "role"))
	}
	assert.Equal(t, "Hel", at(events[0].Data, "candidates", 0, "content", "parts", 0, "text"))
	assert.Nil(t, at(events[0].Data, "candidates", 0, "finishReason"))
	assert.Nil(t, events[0].Data["usageMetadata"])
	assert.Equal(t, "lo", at(events[1].Data, "candidates", 0, "content", "parts", 0, "text"))
	assert.Equal(t, "STOP", at(events[1].Data, "candidates", 0, "finishReason"))
	assert.Equal(t, map[string]any{
		"promptTokenCount": 10.0, "candidatesTokenCount": 3.0, "totalTokenCount": 14.0,
		"cachedContentTokenCount": 2.0, "thoughtsTokenCount": 1.0,
	}, events[1].Data["usageMetadata"])

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1beta/models/gemini-2.5-pro:streamGenerateContent", reqs[0].Path)
	assert.Equal(t, "alt=sse", reqs[0].Query)
	assert.Equal(t, "k", reqs[0].Header.Get("x-goog-api-key"))
	assert.True(t, reqs[0].Scripted)
	assert.Equal(t, 0, reqs[0].Index)
	assert.True(t, reqs[0].BodyContains(`"text":"hi"`))
	assert.Equal(t, "user", at(reqs[0].JSON(), "contents", 0, "role"))
}

func TestGeminiFunctionCall(t *testing.T) {
	s := NewGemini().Script(Reply{
		Text: []string{"Running it."},
		Tool: &ToolCall{Name: "run_shell_command", Args: map[string]any{"command": "ls"}},
	})
	defer s.Close()
	events := readSSE(t, post(t, s.URL()+"/v1beta/models/m:streamGenerateContent?alt=sse", `{}`, nil))
	require.Len(t, events, 2)
	assert.Equal(t, "Running it.", at(events[0].Data, "candidates", 0, "content", "parts", 0, "text"))
	assert.Nil(t, at(events[0].Data, "candidates", 0, "finishReason"))
	call := at(events[1].Data, "candidates", 0, "content", "parts", 0, "functionCall")
	assert.Equal(t, map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "ls"}}, call)
	assert.Equal(t, "STOP", at(events[1].Data, "candidates", 0, "finishReason"))
}

func TestGeminiHTTPErrorAndUtilityCalls(t *testing.T) {
	s := NewGemini().Script(Reply{Status: 400, ErrorMessage: "bad request"})
	defer s.Close()
	resp := post(t, s.URL()+"/v1beta/models/m:streamGenerateContent?alt=sse", `{}`, nil)
	assert.Equal(t, 400, resp.StatusCode)
	assert.Equal(t, map[string]any{"error": map[string]any{
		"code": 400.0, "message": "bad request", "status": "INVALID_ARGUMENT",
	}}, jsonBody(t, resp))

	// A non-streamed call is answered but takes no scripted reply.
	resp = post(t, s.URL()+"/v1beta/models/flash:generateContent", `{}`, nil)
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, GeminiUtilityText, at(jsonBody(t, resp), "candidates", 0, "content", "parts", 0, "text"))
	resp = post(t, s.URL()+"/v1beta/models/flash:countTokens", `{}`, nil)
	assert.Equal(t, map[string]any{"totalTokens": 1.0}, jsonBody(t, resp))
	resp = post(t, s.URL()+"/v1/other", `{}`, nil)
	assert.Equal(t, 404, resp.StatusCode)

	reqs := s.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []bool{true, false, false, false},
		[]bool{reqs[0].Scripted, reqs[1].Scripted, reqs[2].Scripted, reqs[3].Scripted})
	assert.Len(t, s.ModelCalls(), 1)
	assert.Equal(t, 0, s.Unscripted())
	assert.Equal(t, "flash", GeminiModel(reqs[1].Path))
	assert.Equal(t, "", GeminiModel("/v1/other"))
}

func TestFallbackAfterTheScript(t *testing.T) {
	s := NewGemini().Script(TextReply(Usage{}, "one"))
	defer s.Close()
	for _, want := range []string{"one", "(the fake Gemini server has no more scripted replies)", "custom"} {
		if want == "custom" {
			s.SetFallback(TextReply(Usage{}, "custom"))
		}
		events := readSSE(t, post(t, s.URL()+"/v1beta/models/m:streamGenerateContent?alt=sse", `{}`, nil))
		require.Len(t, events, 1)
		assert.Equal(t, want, at(events[0].Data, "candidates", 0, "content", "parts", 0, "text"))
	}
	assert.Equal(t, 2, s.Unscripted())
	calls := s.ModelCalls()
	require.Len(t, calls, 3)
	assert.Equal(t, []int{0, 1, 2}, []int{calls[0].Index, calls[1].Index, calls[2].Index})
	assert.Contains(t, s.Describe(), "POST /v1beta/models/m:streamGenerateContent?alt=sse [reply 2] {}")
}

func TestAnthropicStreamsTextAndToolUse(t *testing.T) {
	s := NewAnthropic().Script(Reply{
		Text:  []string{"Let me ", "check."},
		Tool:  &ToolCall{ID: "toolu_1", Name: "Bash", Args: map[string]any{"command": "ls"}},
		Usage: Usage{Input: 20, Output: 9, Cached: 5},
	})
	defer s.Close()
	events := readSSE(t, post(t, s.URL()+"/v1/messages?beta=true",
		`{"model":"claude-x","stream":true,"messages":[]}`, map[string]string{"x-api-key": "k"}))
	var names []string
	for _, e := range events {
		names = append(names, e.Name)
		assert.Equal(t, e.Name, e.Data["type"], "event name and type agree")
	}
	assert.Equal(t, []string{
		"message_start",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop",
	}, names)
	assert.Equal(t, "claude-x", at(events[0].Data, "message", "model"))
	assert.Equal(t, 20.0, at(events[0].Data, "message", "usage", "input_tokens"))
	assert.Equal(t, 5.0, at(events[0].Data, "message", "usage", "cache_read_input_tokens"))
	assert.Equal(t, "text", at(events[1].Data, "content_block", "type"))
	assert.Equal(t, map[string]any{"type": "text_delta", "text": "Let me "}, events[2].Data["delta"])
	assert.Equal(t, 1.0, events[5].Data["index"])
	assert.Equal(t, map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{}},
		events[5].Data["content_block"])
	assert.Equal(t, map[string]any{"type": "input_json_delta", "partial_json": `{"command":"ls"}`}, events[6].Data["delta"])
	assert.Equal(t, "tool_use", at(events[8].Data, "delta", "stop_reason"))
	assert.Equal(t, 9.0, at(events[8].Data, "usage", "output_tokens"))

	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "beta=true", reqs[0].Query)
	assert.Equal(t, "k", reqs[0].Header.Get("x-api-key"))
}

func TestAnthropicNonStreamedErrorsAndProbes(t *testing.T) {
	s := NewAnthropic().Script(
		TextReply(Usage{Input: 3, Output: 2}, "a", "b"),
		Reply{Status: 529, ErrorMessage: "Overloaded"},
	)
	defer s.Close()
	msg := jsonBody(t, post(t, s.URL()+"/v1/messages", `{"model":"claude-x"}`, nil))
	assert.Equal(t, "message", msg["type"])
	assert.Equal(t, "end_turn", msg["stop_reason"])
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "ab"}}, msg["content"])
	assert.Equal(t, 2.0, at(msg, "usage", "output_tokens"))

	resp := post(t, s.URL()+"/v1/messages", `{"stream":true}`, nil)
	assert.Equal(t, 529, resp.StatusCode)
	assert.Equal(t, map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}},
		jsonBody(t, resp))

	head, err := http.Head(s.URL() + "/")
	require.NoError(t, err)
	head.Body.Close()
	assert.Equal(t, 200, head.StatusCode)
	assert.Equal(t, map[string]any{"input_tokens": 1.0}, jsonBody(t, post(t, s.URL()+"/v1/messages/count_tokens", `{}`, nil)))
	assert.Len(t, s.ModelCalls(), 2)
	assert.Len(t, s.Requests(), 4)
}

func TestOpenAIStreamsTextAndFunctionCall(t *testing.T) {
	s := NewOpenAI().Script(Reply{
		Text:  []string{"On ", "it."},
		Tool:  &ToolCall{ID: "call_1", Name: "exec_command", Args: map[string]any{"cmd": "ls", "workdir": "/w"}},
		Usage: Usage{Input: 30, Output: 8, Cached: 4, Thoughts: 2},
	})
	defer s.Close()
	events := readSSE(t, post(t, s.URL()+"/v1/responses", `{"model":"gpt-x","stream":true}`,
		map[string]string{"Authorization": "Bearer k"}))
	var names []string
	for _, e := range events {
		names = append(names, e.Name)
		assert.Equal(t, e.Name, e.Data["type"])
	}
	assert.Equal(t, []string{
		"response.created",
		"response.output_item.added", "response.output_text.delta", "response.output_text.delta", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.completed",
	}, names)
	assert.Equal(t, "gpt-x", at(events[0].Data, "response", "model"))
	assert.Equal(t, "On ", events[2].Data["delta"])
	assert.Equal(t, "On it.", at(events[4].Data, "item", "content", 0, "text"))
	fc := events[6].Data["item"].(map[string]any)
	assert.Equal(t, "function_call", fc["type"])
	assert.Equal(t, "call_1", fc["call_id"])
	assert.Equal(t, "exec_command", fc["name"])
	assert.JSONEq(t, `{"cmd":"ls","workdir":"/w"}`, fc["arguments"].(string))
	done := events[7].Data["response"].(map[string]any)
	assert.Equal(t, "completed", done["status"])
	assert.Len(t, done["output"], 2)
	assert.Equal(t, map[string]any{
		"input_tokens": 30.0, "input_tokens_details": map[string]any{"cached_tokens": 4.0},
		"output_tokens": 10.0, "output_tokens_details": map[string]any{"reasoning_tokens": 2.0}, // reasoning inside the output, as OpenAI counts it
		"total_tokens": 40.0,
	}, done["usage"])
	assert.Equal(t, "Bearer k", s.Requests()[0].Header.Get("Authorization"))
}

func TestOpenAIErrorAndModels(t *testing.T) {
	s := NewOpenAI().Script(Reply{Status: 500, ErrorMessage: "boom"})
	defer s.Close()
	resp := post(t, s.URL()+"/v1/responses", `{}`, nil)
	assert.Equal(t, 500, resp.StatusCode)
	assert.Equal(t, "boom", at(jsonBody(t, resp), "error", "message"))
	models, err := http.Get(s.URL() + "/v1/models")
	require.NoError(t, err)
	defer models.Body.Close()
	assert.Equal(t, "list", jsonBody(t, models)["object"])
	assert.Len(t, s.ModelCalls(), 1)
}
