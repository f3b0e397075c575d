//go:build interop

package interop

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
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
// answer, or without the capability, is asserted as measured and logged.

func withAnswers(a domain.Answers) optFn {
	return func(o *app.Options) { o.Answers = a }
}

// elicitationsOf are the elicitation events recorded.
func elicitationsOf(evs []domain.Event) []domain.ElicitationInfo {
	var out []domain.ElicitationInfo
	for _, ev := range evs {
		if ev.Type == domain.EventElicitation && ev.Elicitation != nil {
			out = append(out, *ev.Elicitation)
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

// elicitationAnswer is acpdrive's answer on the wire to the runtime's
// first elicitation/create: its result, or its error code.
func elicitationAnswer(t *testing.T, r *rig) (req wireMsg, result map[string]any, errCode int) {
	t.Helper()
	req, ok := r.wire.request("elicitation/create")
	require.True(t, ok, "no elicitation/create reached acpdrive:\n%s", r.wire.String())
	answer, ok := r.wire.answerTo(req.ID)
	require.True(t, ok, "elicitation/create was not answered")
	if answer.Error != nil {
		return req, nil, answer.Error.Code
	}
	require.NoError(t, json.Unmarshal(answer.Result, &result))
	return req, result, 0
}

// toolNames are the names of the tools a model request offered (the
// Anthropic and the Responses APIs both list them under "tools").
func toolNames(call fakes.Request) []string {
	var body struct {
		Tools []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(call.Body, &body)
	var out []string
	for _, tl := range body.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// --- Claude: AskUserQuestion ----------------------------------------------

const (
	claudeQuestion   = "Which branch should I push to?"
	claudeAskID      = "toolu_interop_ask"
	claudeAskAnswer  = "dev"
	claudeAfterReply = "I push to dev."
)

// claudeAsk is the fake model's AskUserQuestion call: one single-select
// question of two options.
func claudeAsk() *fakes.ToolCall {
	return &fakes.ToolCall{ID: claudeAskID, Name: "AskUserQuestion", Args: map[string]any{
		"questions": []any{map[string]any{
			"question":    claudeQuestion,
			"header":      "Branch",
			"multiSelect": false,
			"options": []any{
				map[string]any{"label": "main", "description": "The default branch"},
				map[string]any{"label": "dev", "description": "The development branch"},
			},
		}},
	}}
}

// claudeAskRig is the claude-current rig with the fake model scripted to
// ask, then to answer in text.
func claudeAskRig(t *testing.T) (*rig, *fakes.Server) {
	r, srv := claudeRigOf(t, "claude-current")
	srv.Script(
		fakes.Reply{Text: []string{"I need to ask."}, Tool: claudeAsk(), Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, claudeAfterReply),
	)
	srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
	return r, srv
}

// toolResultOf is the tool_result block for id in an Anthropic request,
// as JSON ("" when none).
func toolResultOf(call fakes.Request, id string) string {
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
	return ""
}

// claudeModelCallWithResult is the first model call carrying the tool
// result of the AskUserQuestion call.
func claudeModelCallWithResult(srv *fakes.Server) (string, bool) {
	for _, c := range srv.ModelCalls() {
		if res := toolResultOf(c, claudeAskID); res != "" {
			return res, true
		}
	}
	return "", false
}

func TestElicitationClaudeAnswered(t *testing.T) {
	t.Parallel()
	r, srv := claudeAskRig(t)
	sess := r.mustStart(withAnswers(domain.Answers{Questions: map[string]map[string]any{
		claudeQuestion: {"question_0": claudeAskAnswer},
	}}))
	res := r.turn(sess, "push my work")
	r.stop(sess)
	t.Logf("outcome: %s %s", res.Outcome, res.Message())
	assert.JSONEq(t, `{"form":{}}`, declaredElicitation(t, r))

	req, result, code := elicitationAnswer(t, r)
	t.Logf("elicitation/create: %s", req.Params)
	t.Logf("answer: %v (error %d)", result, code)
	qs := elicitationsOf(r.rec.All())
	require.Len(t, qs, 1, "one elicitation event")
	t.Logf("event: %+v", qs[0])
	res2, ok := claudeModelCallWithResult(srv)
	t.Logf("tool result to the model (%v): %s", ok, res2)
	for i, c := range srv.ModelCalls() {
		t.Logf("model call %d tools: %v", i, toolNames(c))
	}
	t.Logf("events: %v", r.shape())
}

func TestElicitationClaudeNoPolicy(t *testing.T) {
	t.Parallel()
	r, srv := claudeAskRig(t)
	sess := r.mustStart()
	res := r.turn(sess, "push my work")
	r.stop(sess)
	t.Logf("outcome: %s %s", res.Outcome, res.Message())
	t.Logf("declared: %q", declaredElicitation(t, r))
	_, asked := r.wire.request("elicitation/create")
	t.Logf("elicitation/create seen: %v", asked)
	res2, ok := claudeModelCallWithResult(srv)
	t.Logf("tool result to the model (%v): %s", ok, res2)
	for i, c := range srv.ModelCalls() {
		t.Logf("model call %d tools: %v", i, toolNames(c))
	}
	t.Logf("events: %v", r.shape())
	t.Logf("wire:\n%s", strings.TrimSpace(r.wire.String()))
}

// --- codex: request_user_input ---------------------------------------------

const (
	codexQuestion = "Which branch should I push to?"
	codexAskID    = "call_interop_ask"
)

func codexAsk() *fakes.ToolCall {
	return &fakes.ToolCall{ID: codexAskID, Name: "request_user_input", Args: map[string]any{
		"questions": []any{map[string]any{
			"id":       "branch",
			"header":   "Branch",
			"question": codexQuestion,
			"options": []any{
				map[string]any{"label": "main", "description": "The default branch"},
				map[string]any{"label": "dev", "description": "The development branch"},
			},
		}},
	}}
}

func codexAskRig(t *testing.T) (*rig, *fakes.Server) {
	r, srv := codexRigOf(t, "codex-current")
	srv.Script(
		fakes.Reply{Text: []string{"I need to ask."}, Tool: codexAsk(), Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "I push to dev."),
	)
	srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
	return r, srv
}

func codexPlan() optFn {
	return withSessionConfig(domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "collaboration_mode", Value: "plan"}}})
}

func TestElicitationCodexExplore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts []optFn
	}{
		{"default-answers", []optFn{withAnswers(domain.Answers{Fields: map[string]any{"branch": "dev"}})}},
		{"plan-answers", []optFn{codexPlan(), withAnswers(domain.Answers{Fields: map[string]any{"branch": "dev"}})}},
		{"plan-nopolicy", []optFn{codexPlan()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, srv := codexAskRig(t)
			sess := r.mustStart(c.opts...)
			res := r.turn(sess, "push my work")
			r.stop(sess)
			t.Logf("outcome: %s %s", res.Outcome, res.Message())
			t.Logf("declared: %q", declaredElicitation(t, r))
			if req, ok := r.wire.request("elicitation/create"); ok {
				a, _ := r.wire.answerTo(req.ID)
				t.Logf("elicitation/create: %s\nanswer: %s", req.Params, a.Result)
			}
			for i, call := range srv.ModelCalls() {
				t.Logf("model call %d tools: %v", i, toolNames(call))
				if i > 0 {
					b := string(call.Body)
					if k := strings.Index(b, codexAskID); k >= 0 {
						t.Logf("model call %d around the call id: %.600s", i, b[k:])
					}
				}
			}
			t.Logf("events: %v", r.shape())
		})
	}
}
