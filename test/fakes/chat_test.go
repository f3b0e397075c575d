package fakes

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readChatSSE parses an OpenAI-style data-only stream: the chunks, and
// whether it ended with "data: [DONE]".
func readChatSSE(t *testing.T, resp *http.Response) (chunks []map[string]any, done bool) {
	t.Helper()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case line == "data: [DONE]":
			done = true
		case strings.HasPrefix(line, "data: "):
			require.False(t, done, "nothing after [DONE]")
			var c map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c), line)
			chunks = append(chunks, c)
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	require.NoError(t, sc.Err())
	return chunks, done
}

const chatTools = `"tools":[{"type":"function","function":{"name":"bash","parameters":{}}}]`

func TestChatStreamsTextToolCallAndUsage(t *testing.T) {
	s := NewChat().Script(Reply{
		Text:  []string{"On ", "it."},
		Tool:  &ToolCall{ID: "call_1", Name: "bash", Args: map[string]any{"command": "ls"}},
		Usage: Usage{Input: 30, Output: 8, Cached: 4, Thoughts: 2},
	})
	defer s.Close()
	chunks, done := readChatSSE(t, post(t, s.URL()+"/v1/chat/completions",
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},`+chatTools+`}`,
		map[string]string{"Authorization": "Bearer k"}))
	require.True(t, done)
	require.Len(t, chunks, 6)
	for _, c := range chunks {
		assert.Equal(t, "chat.completion.chunk", c["object"])
		assert.Equal(t, "chatcmpl-fake-0", c["id"])
		assert.Equal(t, "m", c["model"])
	}
	assert.Equal(t, "assistant", at(chunks[0], "choices", 0, "delta", "role"))
	assert.Equal(t, "On ", at(chunks[1], "choices", 0, "delta", "content"))
	assert.Equal(t, "it.", at(chunks[2], "choices", 0, "delta", "content"))
	call := at(chunks[3], "choices", 0, "delta", "tool_calls", 0).(map[string]any)
	assert.Equal(t, "call_1", call["id"])
	assert.Equal(t, "bash", at(call, "function", "name"))
	assert.JSONEq(t, `{"command":"ls"}`, at(call, "function", "arguments").(string))
	assert.Equal(t, "tool_calls", at(chunks[4], "choices", 0, "finish_reason"))
	assert.Empty(t, chunks[5]["choices"])
	assert.Equal(t, map[string]any{
		"prompt_tokens": 30.0, "completion_tokens": 10.0, "total_tokens": 40.0,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 4.0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 2.0},
	}, chunks[5]["usage"])
	reqs := s.ModelCalls()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Bearer k", reqs[0].Header.Get("Authorization"))
	assert.Equal(t, 0, reqs[0].Index)
}

func TestChatNoUsageChunkUnlessAsked(t *testing.T) {
	s := NewChat().Script(TextReply(Usage{Input: 3, Output: 1}, "hi"))
	defer s.Close()
	chunks, done := readChatSSE(t, post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":true,`+chatTools+`}`, nil))
	require.True(t, done)
	require.Len(t, chunks, 3)
	assert.Equal(t, "stop", at(chunks[2], "choices", 0, "finish_reason"))
	for _, c := range chunks {
		assert.NotContains(t, c, "usage")
	}
}

// TestChatSideCallsTakeNoScriptedReply: a non-streamed call and a
// streamed call without tools get the side answer; the scripted reply is
// left for the next real call.
func TestChatSideCallsTakeNoScriptedReply(t *testing.T) {
	s := NewChat().Script(TextReply(Usage{Input: 3, Output: 1}, "scripted"))
	defer s.Close()

	resp := post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":false,"tool_choice":"required",`+chatTools+`}`, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	body := jsonBody(t, resp)
	assert.Equal(t, "chat.completion", body["object"])
	assert.Equal(t, ChatSideText, at(body, "choices", 0, "message", "content"))

	chunks, done := readChatSSE(t, post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[]}`, nil))
	require.True(t, done)
	assert.Equal(t, ChatSideText, at(chunks[1], "choices", 0, "delta", "content"))

	chunks, _ = readChatSSE(t, post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":true,`+chatTools+`}`, nil))
	assert.Equal(t, "scripted", at(chunks[1], "choices", 0, "delta", "content"))

	reqs := s.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []bool{false, false, true}, []bool{reqs[0].Scripted, reqs[1].Scripted, reqs[2].Scripted})
	assert.Equal(t, 0, s.Unscripted())
}

func TestChatHTTPErrorWithRetryHeadersAndModels(t *testing.T) {
	s := NewChat().Script(
		Reply{Status: 500, ErrorMessage: "boom", Header: http.Header{"Retry-After-Ms": {"10"}, "Retry-After": {"0"}}},
		Reply{Status: 400, ErrorMessage: "bad"},
	)
	defer s.Close()
	body := `{"model":"m","stream":true,` + chatTools + `}`
	resp := post(t, s.URL()+"/v1/chat/completions", body, nil)
	assert.Equal(t, 500, resp.StatusCode)
	assert.Equal(t, "10", resp.Header.Get("retry-after-ms"))
	assert.Equal(t, "0", resp.Header.Get("retry-after"))
	e := jsonBody(t, resp)
	assert.Equal(t, "boom", at(e, "error", "message"))
	assert.Equal(t, "server_error", at(e, "error", "type"))

	resp = post(t, s.URL()+"/v1/chat/completions", body, nil)
	assert.Equal(t, 400, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("retry-after-ms"))
	assert.Equal(t, "invalid_request_error", at(jsonBody(t, resp), "error", "type"))

	for _, path := range []string{"/v1/models", "/models"} {
		models, err := http.Get(s.URL() + path)
		require.NoError(t, err)
		list := jsonBody(t, models)
		models.Body.Close()
		assert.Equal(t, "list", list["object"])
		assert.Equal(t, "fake-model", at(list, "data", 0, "id"))
	}
	assert.Len(t, s.ModelCalls(), 2)
	assert.Len(t, s.Requests(), 4)
}

// TestChatHold: a held reply streams its first chunk and waits; closing
// the hold finishes the stream, and a client that goes away ends it.
func TestChatHold(t *testing.T) {
	hold := make(chan struct{})
	gone := make(chan struct{})
	s := NewChat().Script(
		Reply{Text: []string{"first ", "second"}, Hold: hold},
		Reply{Text: []string{"never finished"}, Hold: gone},
	)
	defer s.Close()
	body := `{"model":"m","stream":true,` + chatTools + `}`

	resp := post(t, s.URL()+"/v1/chat/completions", body, nil)
	r := bufio.NewReader(resp.Body)
	var seen []string
	for len(seen) < 2 {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "data: ") {
			seen = append(seen, line)
		}
	}
	assert.Contains(t, seen[1], `"content":"first "`)
	close(hold)
	chunks, done := readChatSSE(t, &http.Response{StatusCode: 200, Header: resp.Header, Body: readCloser{r, resp.Body}})
	assert.True(t, done)
	assert.Equal(t, "second", at(chunks[0], "choices", 0, "delta", "content"))

	// A client that goes away while the reply is held ends the handler.
	client := &http.Client{Timeout: 300 * time.Millisecond}
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	held, err := client.Do(req)
	if err == nil {
		_, err = bufio.NewReader(held.Body).ReadString(0)
		held.Body.Close()
	}
	assert.Error(t, err, "the held stream does not end on its own")
	assert.Len(t, s.ModelCalls(), 2)
}

type readCloser struct {
	*bufio.Reader
	c interface{ Close() error }
}

func (r readCloser) Close() error { return r.c.Close() }

// TestAsideTakesNoScriptedReply: a model call holding an Aside marker gets
// the aside reply and leaves the script to the calls that follow.
func TestAsideTakesNoScriptedReply(t *testing.T) {
	s := NewChat().Script(TextReply(Usage{Input: 3, Output: 1}, "scripted")).
		Aside("name this session", TextReply(Usage{Input: 1, Output: 1}, "a title"))
	defer s.Close()

	chunks, _ := readChatSSE(t, post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"name this session"}],`+chatTools+`}`, nil))
	assert.Equal(t, "a title", at(chunks[1], "choices", 0, "delta", "content"))
	chunks, _ = readChatSSE(t, post(t, s.URL()+"/v1/chat/completions", `{"model":"m","stream":true,`+chatTools+`}`, nil))
	assert.Equal(t, "scripted", at(chunks[1], "choices", 0, "delta", "content"))

	require.Len(t, s.ModelCalls(), 1, "the aside call is no scripted model call")
	assert.Equal(t, 0, s.Unscripted())
}
