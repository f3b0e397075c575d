//go:build interop

package interop

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Gemini CLI 0.61.0 (@google/gemini-cli) against a fake Gemini API.

const geminiModel = "gemini-2.5-pro"

// geminiRig runs Gemini CLI with the model pinned (no router call), the
// workspace trusted and no self-relaunch, against a fresh fake server.
func geminiRig(t testing.TB, withKey bool) (*rig, *fakes.Server) {
	nodePath(t)
	r := newRig(t, locate(t, "gemini", "gemini/node_modules/.bin/gemini"), "--acp", "-m", geminiModel)
	srv := r.serve(fakes.NewGemini())
	// Select API-key authentication explicitly (with GOOGLE_GEMINI_BASE_URL
	// alone Gemini CLI picks its "gateway" method, which needs no key), and
	// turn usage statistics off: they go to a Google logging host, and the
	// suite talks to 127.0.0.1 only.
	writeFile(t, filepath.Join(r.home, ".gemini", "settings.json"),
		`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}`)
	r.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
	r.setenv("GEMINI_CLI_NO_RELAUNCH", "true")
	r.setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())
	if withKey {
		r.setenv("GEMINI_API_KEY", "fake-gemini-key")
	}
	logEvidenceAtEnd(t, "gemini", r)
	return r, srv
}

// geminiGaps is Gemini CLI's capability gap: it advertises loadSession and
// agentInfo, and no measurement source is configured here.
var geminiGaps = gapNotice(domain.CapTokenCounts)

func TestGeminiTextTurn(t *testing.T) {
	t.Parallel()
	want := textTurn(geminiGaps, "Hello from the fake Gemini.")
	script := func(srv *fakes.Server) {
		srv.Script(fakes.TextReply(fakes.Usage{Input: 120, Output: 7, Cached: 20, Thoughts: 3}, "Hello ", "from the ", "fake Gemini."))
	}
	check := func(t *testing.T, r *rig, srv *fakes.Server) {
		calls := srv.ModelCalls()
		require.Len(t, calls, 1, srv.Describe())
		assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", calls[0].Path)
		assert.Equal(t, "alt=sse", calls[0].Query)
		assert.Equal(t, "fake-gemini-key", calls[0].Header.Get("x-goog-api-key"))
		assert.True(t, calls[0].BodyContains("say hello"), "the prompt reaches the model")
		assert.Len(t, srv.Requests(), 1, "no router or utility call with a pinned model:\n%s", srv.Describe())
	}

	t.Run("library", func(t *testing.T) {
		r, srv := geminiRig(t, true)
		script(srv)
		sess := r.mustStart()
		info := agentIs(t, sess, "gemini-cli", "0.61.0")
		assert.True(t, info.Advertised.MCPHTTP)
		assert.Empty(t, info.Advertised.SessionMarkers, "no close, resume or list")
		assert.Equal(t, []string{"oauth-personal", "gemini-api-key", "vertex-ai", "gateway"}, authMethodIDs(info))
		assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, sess.Capabilities().Gaps())

		libraryTurn(t, r, sess, "say hello", completed, want)
		resp, ok := r.wire.responseTo("session/prompt")
		require.True(t, ok)
		var pr struct {
			Meta struct {
				Quota struct {
					TokenCount struct {
						Input  int `json:"input_tokens"`
						Output int `json:"output_tokens"`
					} `json:"token_count"`
				} `json:"quota"`
			} `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(resp.Result, &pr))
		assert.Equal(t, 120, pr.Meta.Quota.TokenCount.Input, "the vendor figure echoes the fake's usage")
		// No session/close: not advertised.
		assert.Equal(t, []string{"initialize", "session/new", "session/prompt"}, r.wire.methodsOut())
		check(t, r, srv)
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := geminiRig(t, true)
		script(srv)
		run := cliCompleted(t, r, want, "say hello")
		assertGaps(t, run, "token counts")
		check(t, r, srv)
	})
}

// TestGeminiToolTurn: the model asks for a shell command; Gemini CLI asks
// for consent with no tool_call before the request; acpdrive refuses with
// the "cancel" (reject_once) option; Gemini tells the model the user
// cancelled and the turn goes on. The model then calls the shell tool
// without its required argument: the call's first and only update is a
// tool_call_update "failed" for an id never announced, which acpdrive
// turns into a tool_result of its own. Then the model answers in text.
func TestGeminiToolTurn(t *testing.T) {
	t.Parallel()
	want := refusedToolTurn(geminiGaps)
	script := func(srv *fakes.Server) {
		srv.Script(
			fakes.Reply{
				Text:  []string{"Let me write the file."},
				Tool:  &fakes.ToolCall{Name: "run_shell_command", Args: map[string]any{"command": "echo interop > out.txt", "description": "write out.txt"}},
				Usage: fakes.Usage{Input: 100, Output: 12},
			},
			fakes.Reply{
				Tool:  &fakes.ToolCall{Name: "run_shell_command", Args: map[string]any{"description": "no command given"}},
				Usage: fakes.Usage{Input: 130, Output: 5},
			},
			fakes.TextReply(fakes.Usage{Input: 160, Output: 6}, "I did not ", "write the file."),
		)
	}
	check := func(t *testing.T, r *rig, srv *fakes.Server) {
		calls := srv.ModelCalls()
		require.Len(t, calls, 3, srv.Describe())
		// What Gemini told the model after the refusal.
		assert.True(t, calls[1].BodyContains(`{"error":"Tool \"run_shell_command\" was canceled by the user."}`), "%s", calls[1].Body)
		assert.Equal(t, 0, srv.Unscripted())
		assertNotWritten(t, r)
	}

	t.Run("library", func(t *testing.T) {
		r, srv := geminiRig(t, true)
		script(srv)
		sess := r.mustStart()
		libraryTurn(t, r, sess, "write interop into out.txt", completed, want)
		check(t, r, srv)

		// The permission request (id 0) came with no tool_call before it,
		// offered proceed_always, proceed_once and cancel, and was answered
		// with cancel.
		perm, ok := r.wire.request("session/request_permission")
		require.True(t, ok)
		assert.Equal(t, "0", string(perm.ID))
		opts, refusedCall := permissionOptions(t, perm)
		assert.Equal(t, []string{"proceed_always=allow_always", "proceed_once=allow_once", "cancel=reject_once"}, opts)
		answer, ok := r.wire.answerTo(perm.ID)
		require.True(t, ok)
		assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"cancel"}}`, string(answer.Result))

		// Tool updates on the wire: none for the refused call, one
		// tool_call_update (failed) for the call with bad arguments.
		var kinds []string
		for _, m := range r.wire.messages() {
			if k := m.updateKind(); k == "tool_call" || k == "tool_call_update" {
				var u struct {
					Update struct {
						ID     string `json:"toolCallId"`
						Status string `json:"status"`
					} `json:"update"`
				}
				require.NoError(t, json.Unmarshal(m.Params, &u))
				assert.NotEqual(t, refusedCall, u.Update.ID, "no update for the refused call")
				kinds = append(kinds, k+":"+u.Update.Status)
			}
		}
		assert.Equal(t, []string{"tool_call_update:failed"}, kinds)
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := geminiRig(t, true)
		script(srv)
		cliCompleted(t, r, want, "write interop into out.txt")
		check(t, r, srv)
	})
}

// TestGeminiModelHTTPError: the model answers HTTP 400; Gemini CLI does
// not retry it and answers the prompt with a JSON-RPC error carrying code
// 400 and, as its message, the API's whole error body; acpdrive reports it
// as response_error, quoting code and message as they came.
func TestGeminiModelHTTPError(t *testing.T) {
	t.Parallel()
	const apiMsg = "Request contains an invalid argument (fake)."
	wantOutcome := outcome{
		Outcome: "turn_failed",
		Kind:    "response_error",
		Message: `session/prompt error 400: {"error":{"code":400,"message":"` + apiMsg + `","status":"INVALID_ARGUMENT"}}`,
	}
	want := []string{started, geminiGaps, "turn_ended_with_error:" + wantOutcome.Message}
	script := func(srv *fakes.Server) {
		srv.Script(fakes.Reply{Status: 400, ErrorMessage: apiMsg})
	}
	t.Run("library", func(t *testing.T) {
		r, srv := geminiRig(t, true)
		script(srv)
		sess := r.mustStart()
		res, _ := libraryTurn(t, r, sess, "say hello", wantOutcome, want)
		assert.True(t, res.Err.Kind.Retryable())
		assert.Len(t, srv.ModelCalls(), 1, "a 400 is not retried:\n%s", srv.Describe())
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := geminiRig(t, true)
		script(srv)
		run := cliFailed(t, r, wantOutcome, want, "say hello", "never sent")
		assert.True(t, *run.Results[0].Retryable)
		assert.Len(t, srv.ModelCalls(), 1)
	})
}

// TestGeminiMissingCredential: with no API key, session/new answers
// -32000; the session does not start, with kind response_error (a working
// session, not a credential verification) and the runtime's message.
func TestGeminiMissingCredential(t *testing.T) {
	t.Parallel()
	const msg = "session/new error -32000: Gemini API key is missing or not configured."
	t.Run("library", func(t *testing.T) {
		r, srv := geminiRig(t, false)
		sess, err := r.start()
		require.Error(t, err)
		assert.Nil(t, sess)
		var ae *domain.AgentError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, domain.KindResponseError, ae.Kind)
		assert.Equal(t, msg, ae.Message)
		// The startup_failed event carries the error's message, as the
		// CLI's startup_failed line does.
		assert.Equal(t, []string{"startup_failed:" + msg}, r.shape())
		assert.Empty(t, srv.Requests())
		resp, ok := r.wire.responseTo("session/new")
		require.True(t, ok)
		require.NotNil(t, resp.Error)
		assert.Equal(t, -32000, resp.Error.Code)
		for _, ev := range r.rec.All() {
			proctestGone(t, ev.AgentPID)
		}
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := geminiRig(t, false)
		run := r.cli("say hello")
		assert.Equal(t, 3, run.Code, run.Stderr)
		require.NotNil(t, run.Startup)
		assert.Equal(t, startupFailedLine{ErrorKind: "response_error", Message: msg}, *run.Startup)
		assert.Empty(t, run.Results)
		assert.Empty(t, srv.Requests())
	})
}
