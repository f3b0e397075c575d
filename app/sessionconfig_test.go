package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

// withSession sets the session configuration.
func withSession(c domain.SessionConfig) option {
	return withConfig(func(s *domain.SessionSettings) { s.Session = c })
}

// params decodes the params of the agent's n-th received request of method.
func params(t *testing.T, path, method string, n int) map[string]json.RawMessage {
	t.Helper()
	var reqs []json.RawMessage
	for _, r := range received(t, path, method) {
		if r.Kind == "request" {
			reqs = append(reqs, r.Message)
		}
	}
	require.Greater(t, len(reqs), n, "the agent received %d× %s", len(reqs), method)
	var msg struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	require.NoError(t, json.Unmarshal(reqs[n], &msg))
	return msg.Params
}

// requestOrder lists the methods of the requests the agent received.
func requestOrder(t *testing.T, path string) []string {
	var out []string
	for _, r := range agentLog(t, path) {
		if r.Kind == "request" {
			out = append(out, r.Method)
		}
	}
	return out
}

func TestSessionConfigIsAppliedAndVerifiedBeforeThePrompt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		scenario string
		cfg      domain.SessionConfig
		calls    []string // configuration requests, in order
		params   []string // their params' compact JSON, without sessionId
		posture  domain.SessionPosture
	}{
		{name: "options of today's Claude adapter", scenario: "session-config",
			cfg:   domain.SessionConfig{Mode: "default", Model: "sonnet", Options: []domain.ConfigSetting{{ID: "effort", Value: "high"}, {ID: "fast", Value: "true"}}},
			calls: []string{"session/set_config_option", "session/set_config_option", "session/set_config_option", "session/set_config_option"},
			params: []string{`{"configId":"mode","value":"default"}`, `{"configId":"model","value":"sonnet"}`,
				`{"configId":"effort","value":"high"}`, `{"configId":"fast","type":"boolean","value":true}`},
			posture: domain.SessionPosture{Mode: "default", Model: "sonnet", Config: []domain.ConfigSetting{
				{ID: "mode", Value: "default"}, {ID: "model", Value: "sonnet"}, {ID: "effort", Value: "high"}, {ID: "fast", Value: "true"}}}},
		{name: "modes and legacy models only", scenario: "session-modes",
			cfg:     domain.SessionConfig{Mode: "read-only", Model: "gpt-b"},
			calls:   []string{"session/set_mode", "session/set_model"},
			params:  []string{`{"modeId":"read-only"}`, `{"modelId":"gpt-b"}`},
			posture: domain.SessionPosture{Mode: "read-only", Model: "gpt-b"}},
		{name: "nothing asked: the posture is still recorded", scenario: "session-config",
			posture: domain.SessionPosture{Mode: "auto", Model: "default", Config: []domain.ConfigSetting{
				{ID: "mode", Value: "auto"}, {ID: "model", Value: "default"}, {ID: "effort", Value: "default"}, {ID: "fast", Value: "false"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, []string{"--scenario", c.scenario}, withSession(c.cfg))
			assert.Equal(t, c.posture, h.sess.Posture())
			require.NotNil(t, h.sess.AgentInfo().Posture)
			res := h.turn("hello")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())

			var calls []string
			for _, m := range requestOrder(t, h.agentLg) {
				if strings.HasPrefix(m, "session/set_") {
					calls = append(calls, m)
				}
			}
			assert.Equal(t, c.calls, calls)
			order := requestOrder(t, h.agentLg)
			for _, m := range c.calls {
				assert.Less(t, indexOf(order, m), indexOf(order, "session/prompt"), "%s before the prompt in %v", m, order)
			}
			for i, want := range c.params {
				p := params(t, h.agentLg, c.calls[i], countBefore(c.calls, i))
				delete(p, "sessionId")
				got, err := json.Marshal(p)
				require.NoError(t, err)
				assert.JSONEq(t, want, string(got))
			}
			var notices []string
			for _, ev := range h.rec.OfType(domain.EventNotification) {
				notices = append(notices, ev.Message)
			}
			if !c.cfg.Applies() {
				for _, n := range notices {
					assert.NotContains(t, n, domain.MsgSessionPosturePrefix, "an unconfigured session announces nothing")
				}
				return
			}
			assert.Contains(t, notices, domain.MsgSessionPosturePrefix+c.posture.Text())
		})
	}
}

// countBefore is how many times calls[i] occurs before index i.
func countBefore(calls []string, i int) int {
	n := 0
	for _, c := range calls[:i] {
		if c == calls[i] {
			n++
		}
	}
	return n
}

func TestSetModeIsAnEvent(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "session-modes"}, withSession(domain.SessionConfig{Mode: "read-only"}))
	require.Eventually(t, func() bool { return len(h.rec.OfType(domain.EventModeChanged)) > 0 }, waitFor, time.Millisecond)
	assert.Equal(t, "read-only", h.rec.OfType(domain.EventModeChanged)[0].ModeID)
}

func TestSessionConfigRefusedAtStart(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		scenario  string
		cfg       domain.SessionConfig
		msg       string
		noSession bool // refused before session/new
	}{
		{name: "mode not offered", scenario: "session-config", cfg: domain.SessionConfig{Mode: "yolo"},
			msg: `session configuration refused: mode: "yolo" is not offered; the runtime offers default, acceptEdits, plan, auto`},
		{name: "model not offered", scenario: "session-modes", cfg: domain.SessionConfig{Model: "opus"},
			msg: `model: "opus" is not offered; the runtime offers gpt-a, gpt-b`},
		{name: "option missing", scenario: "session-config", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "speed", Value: "9"}}},
			msg: `config option "speed" does not exist; the runtime offers options mode, model, effort, fast`},
		{name: "a setting that does not take", scenario: "session-config", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "effort", Value: "max"}}},
			msg: `config option "effort" "max" did not take: the session answered "default"`},
		{name: "no way to set a mode", scenario: "echo", cfg: domain.SessionConfig{Mode: "default"},
			msg: `mode: "default" cannot be set; the runtime offers no modes`},
		{name: "override not advertised", scenario: "session-modes", cfg: domain.SessionConfig{SystemPrompt: "x", SystemPromptMode: "override"},
			msg: `system prompt mode "override" is not offered; the runtime offers append`, noSession: true},
		{name: "no system prompt capability", scenario: "echo", cfg: domain.SessionConfig{SystemPrompt: "x"},
			msg: "does not advertise sessionCapabilities.systemPrompt", noSession: true},
		{name: "additional directories not advertised", scenario: "session-modes", cfg: domain.SessionConfig{AdditionalDirectories: []string{"/srv"}},
			msg: "does not advertise sessionCapabilities.additionalDirectories", noSession: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o, rec, logs, agentLg := agentOptions(t, []string{"--scenario", c.scenario}, withSession(c.cfg))
			_, err := app.Start(context.Background(), o)
			require.Error(t, err, logs.String())
			kind, _ := domain.KindOf(err)
			assert.Equal(t, domain.KindAgentNotFound, kind)
			assert.Contains(t, err.Error(), c.msg)
			failed := rec.OfType(domain.EventStartupFailed)
			require.Len(t, failed, 1)
			assert.Contains(t, failed[0].Message, c.msg)
			order := requestOrder(t, agentLg)
			assert.NotContains(t, order, "session/prompt")
			if c.noSession {
				assert.NotContains(t, order, "session/new")
			}
		})
	}
}

func TestSystemPromptAndDirectoriesReachEveryCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := domain.SessionConfig{Mode: "default", SystemPrompt: "MARKER-7", SystemPromptMode: domain.SystemPromptOverride, AdditionalDirectories: []string{dir}}
	wantPrompt := `{"mode":"override","content":[{"type":"text","text":"MARKER-7"}]}`
	wantDirs, _ := json.Marshal([]string{dir})

	h := start(t, []string{"--scenario", "session-config"}, withSession(cfg))
	p := params(t, h.agentLg, "session/new", 0)
	assert.JSONEq(t, wantPrompt, string(p["systemPrompt"]))
	assert.JSONEq(t, string(wantDirs), string(p["additionalDirectories"]))
	id := h.sess.ID()
	h.stop()

	// A continued session gets the same settings again: the same system
	// prompt and directories, and its mode set again and verified.
	r := start(t, []string{"--scenario", "session-config"}, withSession(cfg), withResume(id), withClock(fakeclock.New(epoch)))
	assert.Equal(t, "session/load", r.sess.Route())
	p = params(t, r.agentLg, "session/load", 0)
	assert.JSONEq(t, wantPrompt, string(p["systemPrompt"]))
	assert.JSONEq(t, string(wantDirs), string(p["additionalDirectories"]))
	set := params(t, r.agentLg, "session/set_config_option", 0)
	assert.JSONEq(t, `"default"`, string(set["value"]))
	assert.Equal(t, "default", r.sess.Posture().Mode)
	assert.NotContains(t, requestOrder(t, r.agentLg), "session/new")
}

func TestAppendIsTheDefaultSystemPromptMode(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "session-modes"}, withSession(domain.SessionConfig{SystemPrompt: "be brief"}))
	p := params(t, h.agentLg, "session/new", 0)
	assert.JSONEq(t, `{"mode":"append","content":[{"type":"text","text":"be brief"}]}`, string(p["systemPrompt"]))
	assert.NotContains(t, p, "additionalDirectories")
}

// TestSessionConfigOnV2: a v2 session is configured through config options
// only, on session/new and again on v2's session/resume, with the same
// system prompt and directories (docs/behaviour.md#protocol-v2).
func TestSessionConfigOnV2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := domain.SessionConfig{Mode: "default", Model: "sonnet", SystemPrompt: "MARKER-8", SystemPromptMode: domain.SystemPromptOverride, AdditionalDirectories: []string{dir}}
	wantPrompt := `{"mode":"override","content":[{"type":"text","text":"MARKER-8"}]}`
	wantDirs, _ := json.Marshal([]string{dir})
	v2 := withConfig(func(s *domain.SessionSettings) { s.Protocol = domain.ProtocolV2 })

	h := start(t, []string{"--scenario", "session-config", "--protocol", "2"}, withSession(cfg), v2)
	p := params(t, h.agentLg, "session/new", 0)
	assert.JSONEq(t, wantPrompt, string(p["systemPrompt"]))
	assert.JSONEq(t, string(wantDirs), string(p["additionalDirectories"]))
	order := requestOrder(t, h.agentLg)
	assert.NotContains(t, order, "session/set_mode", "v2 has no session/set_mode")
	assert.Contains(t, order, "session/set_config_option")
	set := params(t, h.agentLg, "session/set_config_option", 0)
	assert.JSONEq(t, `"id"`, string(set["type"]), "v2 names a select's value by type id")
	assert.Equal(t, "default", h.sess.Posture().Mode)
	assert.Equal(t, "sonnet", h.sess.Posture().Model)
	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	id := h.sess.ID()
	h.stop()

	r := start(t, []string{"--scenario", "session-config", "--protocol", "2"}, withSession(cfg), v2, withResume(id), withClock(fakeclock.New(epoch)))
	assert.Equal(t, "session/resume", r.sess.Route())
	p = params(t, r.agentLg, "session/resume", 0)
	assert.JSONEq(t, wantPrompt, string(p["systemPrompt"]))
	assert.JSONEq(t, string(wantDirs), string(p["additionalDirectories"]))
	assert.Equal(t, "default", r.sess.Posture().Mode)
	assert.NotContains(t, requestOrder(t, r.agentLg), "session/new")
}
