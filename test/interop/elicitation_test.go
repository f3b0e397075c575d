//go:build interop

package interop

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Questions an agent asks (docs/behaviour.md#elicitation) on today's
// releases: Claude's AskUserQuestion tool and codex's request_user_input
// tool, each called by the fake model, reach acpdrive as a form-mode
// elicitation/create only when acpdrive declares the form mode (an answers
// policy is set). What acpdrive guarantees is asserted strictly: the
// capability declared with a policy and only then, one elicitation event
// per question with the runtime's message and schema, the form's content
// on accept, and a turn that ends turn_input_required with the question on
// its result when the policy has no answer. What the runtime does with an
// answer, or without the capability, is what was measured (the tool result
// the model is sent next), asserted on the phrases that carry the answer
// and logged whole.

func withAnswers(a domain.Answers) optFn {
	return func(o *app.Options) { o.Answers = a }
}

// elicitationsOf are the elicitation events recorded.
func elicitationsOf(evs []domain.Event) []domain.ElicitationInfo {
	var out []domain.ElicitationInfo
	for _, ev := range evs {
		if ev.Type == domain.EventElicitation {
			if ev.Elicitation != nil {
				out = append(out, *ev.Elicitation)
			} else {
				out = append(out, domain.ElicitationInfo{}) // asserted against below
			}
		}
	}
	return out
}

// declaredElicitation is clientCapabilities.elicitation of acpdrive's
// initialize ("" when absent).
func declaredElicitation(t *testing.T, r *rig) string {
	t.Helper()
	for _, m := range r.wire.messages() {
		if m.Out && m.Method == "initialize" {
			var p struct {
				ClientCapabilities struct {
					Elicitation json.RawMessage `json:"elicitation"`
				} `json:"clientCapabilities"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &p))
			return string(p.ClientCapabilities.Elicitation)
		}
	}
	t.Fatal("no initialize on the wire")
	return ""
}

// elicitationRequest is the runtime's elicitation/create as acpdrive
// read it, and acpdrive's answer to it.
type elicitationRequest struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      string          `json:"toolCallId"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	answer          wireMsg
}

// askedOnce returns the one elicitation/create the runtime sent and
// acpdrive's answer to it.
func askedOnce(t *testing.T, r *rig) elicitationRequest {
	t.Helper()
	var reqs []wireMsg
	for _, m := range r.wire.messages() {
		if !m.Out && m.Method == "elicitation/create" {
			reqs = append(reqs, m)
		}
	}
	require.Len(t, reqs, 1, "one elicitation/create:\n%s", r.wire.String())
	var q elicitationRequest
	require.NoError(t, json.Unmarshal(reqs[0].Params, &q))
	answer, ok := r.wire.answerTo(reqs[0].ID)
	require.True(t, ok, "elicitation/create was not answered")
	q.answer = answer
	t.Logf("elicitation/create: %s", reqs[0].Params)
	t.Logf("acpdrive's answer: %s", answer.Result)
	return q
}

// assertNotAsked: no elicitation/create reached acpdrive and no
// elicitation event was reported.
func assertNotAsked(t *testing.T, r *rig) {
	t.Helper()
	_, asked := r.wire.request("elicitation/create")
	assert.False(t, asked, "no elicitation/create")
	assert.Empty(t, elicitationsOf(r.rec.All()), "no elicitation event")
}

// assertQuestionEvent: the one elicitation event is the question on the
// wire, answered with action by by.
func assertQuestionEvent(t *testing.T, r *rig, q elicitationRequest, action domain.ElicitationAction, by string) domain.ElicitationInfo {
	t.Helper()
	evs := elicitationsOf(r.rec.All())
	require.Len(t, evs, 1, "one elicitation event: %v", r.shape())
	ev := evs[0]
	assert.Equal(t, domain.PermissionParent, ev.Session)
	assert.Equal(t, q.ToolCallID, ev.ToolCallID)
	assert.Equal(t, domain.ElicitModeForm, ev.Mode)
	assert.Equal(t, q.Message, ev.Message)
	assert.JSONEq(t, string(q.RequestedSchema), string(ev.Schema), "the schema as sent")
	assert.Equal(t, action, ev.Action)
	assert.Equal(t, by, ev.By)
	return ev
}

// toolNames are the names of the tools a model request offered (the
// Anthropic and the Responses APIs both list them under "tools").
func toolNames(call fakes.Request) []string {
	var body struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(call.Body, &body)
	var out []string
	for _, tl := range body.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// cliLine is one line of `acpdrive run --json` as the question rows read
// it.
type cliLine struct {
	Type        string                  `json:"type"`
	Outcome     string                  `json:"outcome"`
	AgentPID    int                     `json:"agent_pid"`
	Elicitation *domain.ElicitationInfo `json:"elicitation"`
	Question    *domain.ElicitationInfo `json:"question"`
}

// cliAsk runs `acpdrive run --json` on the rig's runtime with flags and
// one prompt, and returns its exit code, its elicitation lines and its
// turn_result lines; it checks that the runtime's process group is gone.
func cliAsk(t *testing.T, r *rig, flags []string, prompt string) (code int, asked, results []cliLine) {
	t.Helper()
	args := append([]string{"run", "--json"}, r.launchFlags()...)
	args = append(args, "--stall-timeout", "0", "--turn-timeout", "3m", "--no-measure")
	args = append(append(args, flags...), prompt)
	out, stderr, code := r.acpdrive(args...)
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	pid := 0
	for sc.Scan() {
		var l cliLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), "%s", sc.Bytes())
		switch l.Type {
		case "elicitation":
			asked = append(asked, l)
		case "turn_result":
			results = append(results, l)
		case "run_result":
			pid = l.AgentPID
		}
	}
	require.NoError(t, sc.Err())
	if pid != 0 {
		proctest.WaitGroupEmpty(t, pid, 3*time.Second)
	}
	t.Logf("exit %d; stderr tail: %s", code, tail(stderr, 600))
	return code, asked, results
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// answersFile writes an answers file into the rig's root.
func answersFile(t *testing.T, r *rig, content string) string {
	t.Helper()
	p := filepath.Join(r.root, "answers.json")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// --- Claude: AskUserQuestion ----------------------------------------------

const (
	claudeQuestion = "Which branch should I push to?"
	claudeChecks   = "Which checks should run first?"
	claudeAskID    = "toolu_interop_ask"
	afterAnswer    = "I push to dev."
)

// claudeBranchQuestion is a single-select AskUserQuestion question.
func claudeBranchQuestion() map[string]any {
	return map[string]any{
		"question":    claudeQuestion,
		"header":      "Branch",
		"multiSelect": false,
		"options": []any{
			map[string]any{"label": "main", "description": "The default branch"},
			map[string]any{"label": "dev", "description": "The development branch"},
		},
	}
}

// claudeChecksQuestion is a multi-select AskUserQuestion question.
func claudeChecksQuestion() map[string]any {
	return map[string]any{
		"question":    claudeChecks,
		"header":      "Checks",
		"multiSelect": true,
		"options": []any{
			map[string]any{"label": "lint", "description": "Static checks"},
			map[string]any{"label": "test", "description": "Unit tests"},
			map[string]any{"label": "build", "description": "A release build"},
		},
	}
}

// claudeAskRig is the claude-current rig with the fake model scripted to
// call AskUserQuestion with questions, then to answer in text.
func claudeAskRig(t *testing.T, questions ...map[string]any) (*rig, *fakes.Server) {
	r, srv := claudeRigOf(t, "claude-current")
	qs := make([]any, len(questions))
	for i, q := range questions {
		qs[i] = q
	}
	srv.Script(
		fakes.Reply{Text: []string{"I need to ask."},
			Tool:  &fakes.ToolCall{ID: claudeAskID, Name: "AskUserQuestion", Args: map[string]any{"questions": qs}},
			Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, afterAnswer),
	)
	srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
	return r, srv
}

// anthropicToolResult is the tool_result block for id in the first model
// request that carries one, as JSON ("" when none did).
func anthropicToolResult(srv *fakes.Server, id string) string {
	for _, call := range srv.ModelCalls() {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(call.Body, &body)
		for _, m := range body.Messages {
			var blocks []map[string]any
			if json.Unmarshal(m.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				if b["type"] == "tool_result" && b["tool_use_id"] == id {
					raw, _ := json.Marshal(b)
					return string(raw)
				}
			}
		}
	}
	return ""
}

// TestElicitationClaude: claude-agent-acp 0.101.0 offers the model
// AskUserQuestion only to a client that declares form elicitation, and
// turns the call into one form (a field question_<n> per question, a
// titled oneOf for a single-select, an array of titled anyOf items for a
// multi-select, an optional question_<n>_custom free-text field each,
// nothing required; the message is the question when there is one).
func TestElicitationClaude(t *testing.T) {
	t.Parallel()

	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		r, srv := claudeAskRig(t, claudeBranchQuestion())
		sess := r.mustStart(withAnswers(domain.Answers{Questions: map[string]map[string]any{
			claudeQuestion: {"question_0": "dev"},
		}}))
		res := r.turn(sess, "push my work")
		r.stop(sess)
		assert.Equal(t, completed, outcomeOf(res), res.Message())
		assert.Nil(t, res.Question)
		assert.JSONEq(t, `{"form":{}}`, declaredElicitation(t, r))

		q := askedOnce(t, r)
		assert.Equal(t, domain.ElicitModeForm, q.Mode)
		assert.Equal(t, claudeQuestion, q.Message)
		assert.Equal(t, claudeAskID, q.ToolCallID)
		assert.Contains(t, string(q.RequestedSchema), `"question_0"`)
		assert.JSONEq(t, `{"action":"accept","content":{"question_0":"dev"}}`, string(q.answer.Result))
		ev := assertQuestionEvent(t, r, q, domain.ElicitAccept, domain.ElicitByAnswers)
		assert.Equal(t, []string{"question_0"}, ev.Fields)

		// Measured: the tool is offered, and its result tells the model
		// the answer.
		calls := srv.ModelCalls()
		require.NotEmpty(t, calls)
		assert.Contains(t, toolNames(calls[0]), "AskUserQuestion", "offered to a client that declares form elicitation")
		result := anthropicToolResult(srv, claudeAskID)
		t.Logf("tool result the model was sent: %s", result)
		assert.Contains(t, result, `\"Which branch should I push to?\"=\"dev\"`)
		assert.NotContains(t, result, `"is_error":true`)
		assert.Equal(t, afterAnswer, sess.LastMessage().Text)
	})

	t.Run("multi-select through the CLI", func(t *testing.T) {
		t.Parallel()
		r, srv := claudeAskRig(t, claudeBranchQuestion(), claudeChecksQuestion())
		// With two questions the message is a generic one; each field
		// carries its question in its description, and is answered by it.
		file := answersFile(t, r, `{"fields":{"`+claudeQuestion+`":"main","`+claudeChecks+`":["lint","test"]}}`)
		code, asked, results := cliAsk(t, r, []string{"--answers", file}, "push my work")
		assert.Equal(t, 0, code)
		require.Len(t, asked, 1)
		ev := asked[0].Elicitation
		require.NotNil(t, ev)
		t.Logf("elicitation line: %s %q (%s) schema %s", ev.Action, ev.Message, strings.Join(ev.Fields, ", "), ev.Schema)
		assert.Equal(t, domain.ElicitAccept, ev.Action, ev.Reason)
		assert.Equal(t, []string{"question_0", "question_1"}, ev.Fields)
		assert.Equal(t, claudeAskID, ev.ToolCallID)
		assert.Contains(t, string(ev.Schema), `"type":"array"`, "a multi-select is an array field")
		require.Len(t, results, 1)
		assert.Equal(t, "turn_completed", results[0].Outcome)
		assert.Nil(t, results[0].Question)
		// Measured: the picks reach the model comma-joined.
		result := anthropicToolResult(srv, claudeAskID)
		t.Logf("tool result the model was sent: %s", result)
		assert.Contains(t, result, `\"Which branch should I push to?\"=\"main\"`)
		assert.Contains(t, result, `\"Which checks should run first?\"=\"lint, test\"`)
	})

	t.Run("declined", func(t *testing.T) {
		t.Parallel()
		r, srv := claudeAskRig(t, claudeBranchQuestion())
		// "release" is not one of the field's choices (a titled oneOf).
		sess := r.mustStart(withAnswers(domain.Answers{Fields: map[string]any{"question_0": "release"}}))
		res := r.turn(sess, "push my work")
		r.stop(sess)
		assert.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
		require.NotNil(t, res.Question, "the question is on the result")
		assert.Equal(t, claudeQuestion, res.Question.Message)
		assert.Equal(t, domain.ElicitDecline, res.Question.Action)
		assert.Equal(t, `the answer for the field "question_0" is not one of the field's choices`, res.Question.Reason)

		q := askedOnce(t, r)
		assert.JSONEq(t, `{"action":"decline"}`, string(q.answer.Result))
		assertQuestionEvent(t, r, q, domain.ElicitDecline, domain.ElicitByAnswers)
		// Measured: the adapter tells the model the question was skipped
		// (empty answers); acpdrive has ended the turn by then.
		t.Logf("tool result the model was sent (if any): %s", anthropicToolResult(srv, claudeAskID))
		t.Logf("calls after the answer: %v", r.wire.methodsOut())
	})

	t.Run("no policy", func(t *testing.T) {
		t.Parallel()
		r, srv := claudeAskRig(t, claudeBranchQuestion())
		sess := r.mustStart()
		res := r.turn(sess, "push my work")
		r.stop(sess)
		assert.Empty(t, declaredElicitation(t, r), "nothing declared without a policy")
		assertNotAsked(t, r)
		// Measured: without form elicitation the adapter disables the tool:
		// it is not offered, and a call of it fails back to the model,
		// which goes on; the turn completes.
		calls := srv.ModelCalls()
		require.NotEmpty(t, calls)
		assert.NotContains(t, toolNames(calls[0]), "AskUserQuestion")
		result := anthropicToolResult(srv, claudeAskID)
		t.Logf("tool result the model was sent: %s", result)
		assert.Contains(t, result, "No such tool available: AskUserQuestion")
		assert.Equal(t, completed, outcomeOf(res), res.Message())
		assert.Nil(t, res.Question)
	})
}

// --- codex: request_user_input ---------------------------------------------

const (
	codexAskID    = "call_interop_ask"
	codexMessage  = "Codex needs your input to continue."
	codexQuestion = "Which branch should I push to?"
)

// codexAskRig is the codex-current rig with the fake model scripted to
// call request_user_input with one question (id "branch", two options),
// then to answer in text.
func codexAskRig(t *testing.T) (*rig, *fakes.Server) {
	r, srv := codexRigOf(t, "codex-current")
	srv.Script(
		fakes.Reply{Text: []string{"I need to ask."}, Tool: &fakes.ToolCall{ID: codexAskID, Name: "request_user_input", Args: map[string]any{
			"questions": []any{map[string]any{
				"id":       "branch",
				"header":   "Branch",
				"question": codexQuestion,
				"options": []any{
					map[string]any{"label": "main", "description": "The default branch"},
					map[string]any{"label": "dev", "description": "The development branch"},
				},
			}},
		}}, Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, afterAnswer),
	)
	srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
	return r, srv
}

// codexPlan puts the session in codex's Plan collaboration mode, the one
// where request_user_input is available.
var codexPlan = []domain.ConfigSetting{{ID: "collaboration_mode", Value: "plan"}}

// codexToolOutput is the output of the function call id in the first
// model request that carries it ("" when none did).
func codexToolOutput(srv *fakes.Server, id string) string {
	for _, call := range srv.ModelCalls() {
		var body struct {
			Input []struct {
				Type   string          `json:"type"`
				CallID string          `json:"call_id"`
				Output json.RawMessage `json:"output"`
			} `json:"input"`
		}
		_ = json.Unmarshal(call.Body, &body)
		for _, item := range body.Input {
			if item.Type == "function_call_output" && item.CallID == id {
				var s string
				if json.Unmarshal(item.Output, &s) == nil {
					return s
				}
				return string(item.Output)
			}
		}
	}
	return ""
}

// TestElicitationCodex: codex-acp 2.6.0 turns codex's request_user_input
// (available in the Plan collaboration mode only) into one form: a field
// per question named by its id, titled with the question, its options a
// titled oneOf with "None of the above" added, a free-text <id>_note
// field, every question required; the message is always "Codex needs your
// input to continue.". Without form elicitation it answers the tool with
// no answers itself and nothing reaches acpdrive.
func TestElicitationCodex(t *testing.T) {
	t.Parallel()

	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		r, srv := codexAskRig(t)
		// The field is named with the id the model chose; the policy
		// answers it by its title, the question.
		sess := r.mustStart(withSessionConfig(domain.SessionConfig{Options: codexPlan}),
			withAnswers(domain.Answers{Fields: map[string]any{codexQuestion: "dev"}}))
		res := r.turn(sess, "push my work")
		r.stop(sess)
		assert.Equal(t, completed, outcomeOf(res), res.Message())
		assert.Nil(t, res.Question)
		assert.JSONEq(t, `{"form":{}}`, declaredElicitation(t, r))

		q := askedOnce(t, r)
		assert.Equal(t, domain.ElicitModeForm, q.Mode)
		assert.Equal(t, codexMessage, q.Message)
		assert.Equal(t, codexAskID, q.ToolCallID)
		assert.Contains(t, string(q.RequestedSchema), `"title":"`+codexQuestion+`"`)
		assert.JSONEq(t, `{"action":"accept","content":{"branch":"dev"}}`, string(q.answer.Result))
		ev := assertQuestionEvent(t, r, q, domain.ElicitAccept, domain.ElicitByAnswers)
		assert.Equal(t, []string{"branch"}, ev.Fields)

		out := codexToolOutput(srv, codexAskID)
		t.Logf("tool output the model was sent: %s", out)
		assert.JSONEq(t, `{"answers":{"branch":{"answers":["dev"]}}}`, out)
		assert.Equal(t, afterAnswer, sess.LastMessage().Text)
	})

	t.Run("declined through the CLI", func(t *testing.T) {
		t.Parallel()
		r, srv := codexAskRig(t)
		file := answersFile(t, r, `{"fields":{"release":"v2"}}`)
		code, asked, results := cliAsk(t, r, []string{"--config", "collaboration_mode=plan", "--answers", file}, "push my work")
		assert.Equal(t, 4, code, "turn_input_required exits 4")
		require.Len(t, asked, 1)
		require.NotNil(t, asked[0].Elicitation)
		assert.Equal(t, domain.ElicitDecline, asked[0].Elicitation.Action)
		assert.Equal(t, `no answer for the required field "branch"`, asked[0].Elicitation.Reason)
		require.Len(t, results, 1)
		assert.Equal(t, "turn_input_required", results[0].Outcome)
		require.NotNil(t, results[0].Question, "the question is on turn_result")
		q := results[0].Question
		assert.Equal(t, codexMessage, q.Message)
		assert.Equal(t, codexAskID, q.ToolCallID)
		assert.Equal(t, domain.ElicitDecline, q.Action)
		assert.Equal(t, domain.ElicitByAnswers, q.By)
		assert.Contains(t, string(q.Schema), `"title":"`+codexQuestion+`"`, "the question itself is in the schema")
		t.Logf("tool output the model was sent (if any): %q", codexToolOutput(srv, codexAskID))
	})

	t.Run("no policy", func(t *testing.T) {
		t.Parallel()
		r, srv := codexAskRig(t)
		sess := r.mustStart(withSessionConfig(domain.SessionConfig{Options: codexPlan}))
		res := r.turn(sess, "push my work")
		r.stop(sess)
		assert.Empty(t, declaredElicitation(t, r), "nothing declared without a policy")
		assertNotAsked(t, r)
		// Measured: codex-acp answers the tool itself with no answers, and
		// the model goes on; the turn completes.
		out := codexToolOutput(srv, codexAskID)
		t.Logf("tool output the model was sent: %s", out)
		assert.JSONEq(t, `{"answers":{}}`, out)
		assert.Equal(t, completed, outcomeOf(res), res.Message())
	})

	t.Run("default collaboration mode", func(t *testing.T) {
		t.Parallel()
		r, srv := codexAskRig(t)
		sess := r.mustStart(withAnswers(domain.Answers{Fields: map[string]any{"branch": "dev"}}))
		res := r.turn(sess, "push my work")
		r.stop(sess)
		assert.JSONEq(t, `{"form":{}}`, declaredElicitation(t, r))
		assertNotAsked(t, r)
		// Measured: outside Plan mode codex refuses the tool itself.
		out := codexToolOutput(srv, codexAskID)
		t.Logf("tool output the model was sent: %s", out)
		assert.Contains(t, out, "request_user_input is unavailable in Default mode")
		assert.Equal(t, completed, outcomeOf(res), res.Message())
	})
}
