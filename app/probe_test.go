package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// TestProbeShowsEverythingAdvertised: every session capability key, the
// auth methods and auth capabilities, providers and _meta keys reach the
// report; with ProbeOptions.Session, the throwaway session's modes, options,
// models and commands too, and it is deleted after.
func TestProbeShowsEverythingAdvertised(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		session bool
	}{{"handshake only", false}, {"with a session", true}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o, _, _, agentLg := agentOptions(t, []string{"--scenario", "advertise-all"})
			r, err := app.Probe(context.Background(), o, app.ProbeOptions{Session: c.session})
			require.NoError(t, err)
			assert.Equal(t, []string{"list", "delete", "additionalDirectories", "resume", "close", "fork", "subagents", "systemPrompt", "title"}, r.SessionCapabilities)
			assert.Equal(t, map[string]string{"systemPrompt": `{"mode":{"override":{}}}`}, r.SessionCapabilityValues)
			assert.Equal(t, []app.ProbeAuthMethod{
				{ID: "api-key", Name: "API key", Description: "Use an API key from the environment"},
				{ID: "chat-gpt", Name: "ChatGPT"},
			}, r.AuthMethods)
			assert.Equal(t, []string{"logout"}, r.AuthCapabilities)
			assert.Equal(t, []string{}, r.Providers, "advertised, empty")
			assert.Equal(t, []string{"authStatus.kind", "claudeCode.promptQueueing"}, r.MetaKeys)
			assert.Equal(t, "session/close", r.TeardownMethod)
			if !c.session {
				assert.Nil(t, r.Session)
				assert.Empty(t, received(t, agentLg, "session/new"), "a plain probe creates no session")
				return
			}
			require.NotNil(t, r.Session)
			assert.Equal(t, &app.ProbeSession{
				SessionID:   "ref-1",
				CurrentMode: "default",
				Modes:       []app.ProbeMode{{ID: "default", Name: "Manual", Description: "Always ask"}, {ID: "auto", Name: "Auto"}},
				ConfigOptions: []domain.ConfigOption{
					{ID: "mode", Name: "Mode", Category: "mode", Value: "default", Values: []string{"default", "auto"}},
					{ID: "fast", Name: "Fast", Category: "model_config", Value: "false"},
				},
				CurrentModel: "opus",
				Models:       []app.ProbeModel{{ID: "opus", Name: "Opus"}, {ID: "haiku", Name: "Haiku"}},
				Commands:     []domain.Command{{Name: "compact", Description: "Compact the conversation"}, {Name: "review"}},
				EndedWith:    "session/delete",
			}, r.Session)
			assert.Len(t, received(t, agentLg, "session/delete"), 1, "the throwaway session is deleted")
		})
	}
}

// TestProbeOfAPlainRuntime: a runtime that advertises little reports
// empty lists, no providers, and a session with no modes or models.
func TestProbeOfAPlainRuntime(t *testing.T) {
	t.Parallel()
	o, _, _, _ := agentOptions(t, []string{"--scenario", "commands-after-new"})
	r, err := app.Probe(context.Background(), o, app.ProbeOptions{Session: true})
	require.NoError(t, err)
	assert.Equal(t, []string{}, r.SessionCapabilities)
	assert.Nil(t, r.Providers)
	assert.Equal(t, []string{}, r.AuthCapabilities)
	require.NotNil(t, r.Session)
	assert.Empty(t, r.Session.Modes)
	assert.Empty(t, r.Session.Models)
	assert.Equal(t, []domain.Command{{Name: "web", Description: "Search the web"}}, r.Session.Commands)
	assert.Equal(t, "", r.Session.EndedWith, "neither close nor delete advertised")
}
