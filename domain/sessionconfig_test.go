package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// claudeOffer is the shape of today's Claude adapter's session/new answer.
func claudeOffer() domain.SessionOffer {
	return domain.SessionOffer{
		Modes: []string{"default", "acceptEdits", "plan", "auto"}, CurrentMode: "auto",
		Options: []domain.OfferedOption{
			{ID: "mode", Category: "mode", Value: "auto", Values: []string{"default", "acceptEdits", "plan", "auto"}},
			{ID: "model", Category: "model", Value: "default", Values: []string{"default", "opus", "sonnet"}},
			{ID: "effort", Category: "thought_level", Value: "default", Values: []string{"default", "high"}},
			{ID: "fast", Category: "model_config", Boolean: true, Value: "false"},
		},
	}
}

// modesOnly offers modes and legacy models, no options.
func modesOnly() domain.SessionOffer {
	return domain.SessionOffer{Modes: []string{"read-only", "agent"}, CurrentMode: "agent", Models: []string{"a", "b"}, CurrentModel: "a"}
}

func TestPlanSessionConfig(t *testing.T) {
	cases := []struct {
		name  string
		cfg   domain.SessionConfig
		offer domain.SessionOffer
		calls []domain.ConfigCall
		err   string // substring of the refusal; "" for none
	}{
		{name: "nothing asked", offer: claudeOffer()},
		{name: "mode through the mode option", cfg: domain.SessionConfig{Mode: "default"}, offer: claudeOffer(),
			calls: []domain.ConfigCall{{Via: domain.ConfigViaOption, OptionID: "mode", Value: "default", Setting: "mode"}}},
		{name: "mode already current needs no call", cfg: domain.SessionConfig{Mode: "auto"}, offer: claudeOffer()},
		{name: "model through the model option", cfg: domain.SessionConfig{Model: "sonnet"}, offer: claudeOffer(),
			calls: []domain.ConfigCall{{Via: domain.ConfigViaOption, OptionID: "model", Value: "sonnet", Setting: "model"}}},
		{name: "a boolean option", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "fast", Value: "true"}}}, offer: claudeOffer(),
			calls: []domain.ConfigCall{{Via: domain.ConfigViaOption, OptionID: "fast", Boolean: true, Value: "true", Setting: `config option "fast"`}}},
		{name: "mode, model, options in order",
			cfg:   domain.SessionConfig{Mode: "plan", Model: "opus", Options: []domain.ConfigSetting{{ID: "effort", Value: "high"}}},
			offer: claudeOffer(),
			calls: []domain.ConfigCall{
				{Via: domain.ConfigViaOption, OptionID: "mode", Value: "plan", Setting: "mode"},
				{Via: domain.ConfigViaOption, OptionID: "model", Value: "opus", Setting: "model"},
				{Via: domain.ConfigViaOption, OptionID: "effort", Value: "high", Setting: `config option "effort"`},
			}},
		{name: "mode through session/set_mode", cfg: domain.SessionConfig{Mode: "read-only"}, offer: modesOnly(),
			calls: []domain.ConfigCall{{Via: domain.ConfigViaMode, Value: "read-only", Setting: "mode"}}},
		{name: "model through the legacy list", cfg: domain.SessionConfig{Model: "b"}, offer: modesOnly(),
			calls: []domain.ConfigCall{{Via: domain.ConfigViaModel, Value: "b", Setting: "model"}}},
		{name: "mode not offered", cfg: domain.SessionConfig{Mode: "yolo"}, offer: claudeOffer(),
			err: `mode: "yolo" is not offered; the runtime offers default, acceptEdits, plan, auto`},
		{name: "mode not offered by set_mode", cfg: domain.SessionConfig{Mode: "yolo"}, offer: modesOnly(),
			err: `mode: "yolo" is not offered; the runtime offers read-only, agent`},
		{name: "no modes at all", cfg: domain.SessionConfig{Mode: "default"}, offer: domain.SessionOffer{},
			err: `mode: "default" cannot be set; the runtime offers no modes`},
		{name: "no models at all", cfg: domain.SessionConfig{Model: "x"}, offer: domain.SessionOffer{Modes: []string{"a"}},
			err: `model: "x" cannot be set; the runtime offers no models`},
		{name: "model not offered", cfg: domain.SessionConfig{Model: "gpt"}, offer: claudeOffer(),
			err: `model: "gpt" is not offered; the runtime offers default, opus, sonnet`},
		{name: "option missing", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "speed", Value: "1"}}}, offer: claudeOffer(),
			err: `config option "speed" does not exist; the runtime offers options mode, model, effort, fast`},
		{name: "option value not offered", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "effort", Value: "max"}}}, offer: claudeOffer(),
			err: `config option "effort": "max" is not offered; the runtime offers default, high`},
		{name: "boolean wants true or false", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "fast", Value: "yes"}}}, offer: claudeOffer(),
			err: `config option "fast": "yes" is not offered; the runtime offers true, false`},
		{name: "mode and the mode option disagree",
			cfg:   domain.SessionConfig{Mode: "plan", Options: []domain.ConfigSetting{{ID: "mode", Value: "auto"}}},
			offer: claudeOffer(), err: `config option "mode" sets option "mode" to "auto", already set to "plan"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls, err := domain.PlanSessionConfig(c.cfg, c.offer)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				kind, _ := domain.KindOf(err)
				assert.Equal(t, domain.KindAgentNotFound, kind)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.calls, calls)
		})
	}
}

func TestVerifySessionConfig(t *testing.T) {
	taken := claudeOffer()
	taken.Options[0].Value = "default"
	taken.Options[1].Value = "sonnet"
	cases := []struct {
		name  string
		cfg   domain.SessionConfig
		state domain.SessionOffer
		err   string
	}{
		{name: "everything took", cfg: domain.SessionConfig{Mode: "default", Model: "sonnet"}, state: taken},
		{name: "the mode did not take", cfg: domain.SessionConfig{Mode: "default"}, state: claudeOffer(),
			err: `mode "default" did not take: the session answered "auto"`},
		{name: "set_mode's mode", cfg: domain.SessionConfig{Mode: "agent"}, state: modesOnly()},
		{name: "an option did not take", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "effort", Value: "high"}}}, state: claudeOffer(),
			err: `config option "effort" "high" did not take: the session answered "default"`},
		{name: "an option vanished", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "effort", Value: "high"}}}, state: modesOnly(),
			err: `config option "effort" "high" did not take: the session answered no such option`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := domain.VerifySessionConfig(c.cfg, c.state)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
		})
	}
}

func TestCheckBeforeSession(t *testing.T) {
	both := []string{"append", "override"}
	cases := []struct {
		name  string
		cfg   domain.SessionConfig
		modes []string
		dirs  bool
		err   string
	}{
		{name: "nothing asked"},
		{name: "append by default", cfg: domain.SessionConfig{SystemPrompt: "x"}, modes: []string{"append"}},
		{name: "override advertised", cfg: domain.SessionConfig{SystemPrompt: "x", SystemPromptMode: "override"}, modes: both},
		{name: "override not advertised", cfg: domain.SessionConfig{SystemPrompt: "x", SystemPromptMode: "override"}, modes: []string{"append"},
			err: `system prompt mode "override" is not offered; the runtime offers append`},
		{name: "no capability", cfg: domain.SessionConfig{SystemPrompt: "x"},
			err: "system prompt (append): the runtime does not advertise sessionCapabilities.systemPrompt"},
		{name: "a mode without a prompt", cfg: domain.SessionConfig{SystemPromptMode: "override"}, modes: both,
			err: `system prompt mode "override" is set without a system prompt`},
		{name: "directories advertised", cfg: domain.SessionConfig{AdditionalDirectories: []string{"/a"}}, dirs: true},
		{name: "directories not advertised", cfg: domain.SessionConfig{AdditionalDirectories: []string{"/a"}},
			err: "additional directories: the runtime does not advertise sessionCapabilities.additionalDirectories"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := domain.CheckBeforeSession(c.cfg, c.modes, c.dirs)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
		})
	}
}

func TestSessionConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		cfg    domain.SessionConfig
		checks []string
	}{
		{name: "zero is fine"},
		{name: "all good", cfg: domain.SessionConfig{Mode: "m", SystemPrompt: "p", SystemPromptMode: "override",
			AdditionalDirectories: []string{"/abs"}, Options: []domain.ConfigSetting{{ID: "a", Value: "1"}}}},
		{name: "bad prompt mode", cfg: domain.SessionConfig{SystemPromptMode: "replace"}, checks: []string{domain.CheckSystemPromptModeInvalid}},
		{name: "relative directory", cfg: domain.SessionConfig{AdditionalDirectories: []string{"rel"}}, checks: []string{domain.CheckAdditionalDirectoryNotAbsolute}},
		{name: "bad options", cfg: domain.SessionConfig{Options: []domain.ConfigSetting{{ID: "", Value: "1"}, {ID: "a", Value: ""}, {ID: "b", Value: "1"}, {ID: "b", Value: "2"}}},
			checks: []string{domain.CheckConfigOptionInvalid, domain.CheckConfigOptionInvalid, domain.CheckConfigOptionInvalid}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var checks []string
			for _, f := range c.cfg.Validate() {
				assert.Equal(t, domain.SeverityError, f.Severity)
				checks = append(checks, f.Check)
			}
			assert.Equal(t, c.checks, checks)
			// SessionSettings and Config refuse the same.
			set := domain.DefaultSessionSettings()
			set.Session = c.cfg
			assert.Equal(t, len(c.checks), len(set.Validate()))
		})
	}
}

func TestSessionPostureText(t *testing.T) {
	p := claudeOffer().Posture()
	assert.Equal(t, "auto", p.Mode)
	assert.Equal(t, "default", p.Model)
	assert.Equal(t, "mode auto; model default; config mode=auto, model=default, effort=default, fast=false", p.Text())
	assert.True(t, domain.SessionPosture{}.IsZero())
	assert.Equal(t, "agent", modesOnly().Posture().Mode)
	assert.Equal(t, "a", modesOnly().Posture().Model)
}
