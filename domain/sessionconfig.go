package domain

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// System prompt modes (docs/behaviour.md#session-configuration).
const (
	// SystemPromptAppend adds the text after the runtime's own system
	// prompt (the default).
	SystemPromptAppend = "append"
	// SystemPromptOverride replaces the runtime's own system prompt.
	SystemPromptOverride = "override"
)

// Session configuration check names (docs/behaviour.md#session-configuration).
const (
	// CheckSystemPromptModeInvalid: agent.system_prompt_mode is neither
	// append nor override.
	CheckSystemPromptModeInvalid = "agent.system_prompt_mode.invalid"
	// CheckAdditionalDirectoryNotAbsolute: an agent.additional_directories
	// entry is not an absolute path.
	CheckAdditionalDirectoryNotAbsolute = "agent.additional_directories.not_absolute"
	// CheckConfigOptionInvalid: an agent.config_options entry has an empty
	// id or value, or names an id twice.
	CheckConfigOptionInvalid = "agent.config_options.invalid"
)

// SessionConfig is what the operator chose for the session itself
// (docs/behaviour.md#session-configuration): its mode, model and
// configuration options, the directories it may use beside the workspace,
// and a system prompt. The zero value chooses nothing: the session runs as
// the runtime starts it.
type SessionConfig struct {
	// Mode is the mode to put the session in ("" leaves it): the option of
	// category "mode", else session/set_mode.
	Mode string
	// Model is the model to use ("" leaves it): the option of category
	// "model", else the legacy model list.
	Model string
	// Options are further configuration options by id, applied in order.
	Options []ConfigSetting
	// AdditionalDirectories are absolute directories sent on session/new
	// and every continuation.
	AdditionalDirectories []string
	// SystemPrompt is text for the runtime's system prompt ("" sends none).
	SystemPrompt string
	// SystemPromptMode is SystemPromptAppend or SystemPromptOverride; ""
	// means append.
	SystemPromptMode string
}

// ConfigSetting is one configuration option set by id to a value (the
// value's id for a select, "true"/"false" for a boolean).
type ConfigSetting struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// IsZero reports whether the configuration chooses nothing.
func (c SessionConfig) IsZero() bool {
	return c.Mode == "" && c.Model == "" && len(c.Options) == 0 && len(c.AdditionalDirectories) == 0 && c.SystemPrompt == "" && c.SystemPromptMode == ""
}

// Applies reports whether the configuration sets anything once the session
// exists (a mode, a model or an option).
func (c SessionConfig) Applies() bool {
	return c.Mode != "" || c.Model != "" || len(c.Options) > 0
}

// EffectiveSystemPromptMode is SystemPromptMode, or SystemPromptAppend when
// it is empty.
func (c SessionConfig) EffectiveSystemPromptMode() string {
	if c.SystemPromptMode == "" {
		return SystemPromptAppend
	}
	return c.SystemPromptMode
}

// Validate returns the error findings that keep the configuration from
// starting a session, in a fixed order: the system prompt mode, the
// additional directories, the options. nil when there are none.
func (c SessionConfig) Validate() []Finding {
	var fs []Finding
	if m := c.SystemPromptMode; m != "" && m != SystemPromptAppend && m != SystemPromptOverride {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckSystemPromptModeInvalid,
			Message: fmt.Sprintf("agent.system_prompt_mode %q is not one of append, override", m)})
	}
	for _, d := range c.AdditionalDirectories {
		if !filepath.IsAbs(d) && !strings.HasPrefix(d, "/") {
			fs = append(fs, Finding{Severity: SeverityError, Check: CheckAdditionalDirectoryNotAbsolute,
				Message: fmt.Sprintf("agent.additional_directories: %q is not an absolute path", d)})
		}
	}
	seen := map[string]bool{}
	for _, o := range c.Options {
		switch {
		case strings.TrimSpace(o.ID) == "":
			fs = append(fs, Finding{Severity: SeverityError, Check: CheckConfigOptionInvalid,
				Message: "agent.config_options: an option has an empty id"})
		case strings.TrimSpace(o.Value) == "":
			fs = append(fs, Finding{Severity: SeverityError, Check: CheckConfigOptionInvalid,
				Message: fmt.Sprintf("agent.config_options: option %q has an empty value", o.ID)})
		case seen[o.ID]:
			fs = append(fs, Finding{Severity: SeverityError, Check: CheckConfigOptionInvalid,
				Message: fmt.Sprintf("agent.config_options: option %q is set twice", o.ID)})
		}
		seen[o.ID] = true
	}
	return fs
}

// OfferedOption is one configuration option as the runtime's session
// answer offers it.
type OfferedOption struct {
	ID       string
	Category string
	// Boolean is true for an option of type boolean.
	Boolean bool
	// Value is the current value as text.
	Value string
	// Values lists the values a select offers.
	Values []string
}

// SessionOffer is what a session answer (session/new, load, resume, or a
// set_config_option answer) says the session offers and where it stands.
type SessionOffer struct {
	// Modes are the ids of availableModes; CurrentMode is currentModeId.
	Modes       []string
	CurrentMode string
	// Options are the configOptions.
	Options []OfferedOption
	// Models are the ids of the legacy models list; CurrentModel its
	// currentModelId.
	Models       []string
	CurrentModel string
}

// option returns the option with id, if offered.
func (o SessionOffer) option(id string) (OfferedOption, bool) {
	for _, opt := range o.Options {
		if opt.ID == id {
			return opt, true
		}
	}
	return OfferedOption{}, false
}

// byCategory returns the first option of category cat, if offered.
func (o SessionOffer) byCategory(cat string) (OfferedOption, bool) {
	for _, opt := range o.Options {
		if opt.Category == cat {
			return opt, true
		}
	}
	return OfferedOption{}, false
}

// Mode is where the session's mode stands: the value of the option of
// category "mode", else CurrentMode.
func (o SessionOffer) Mode() string {
	if opt, ok := o.byCategory("mode"); ok {
		return opt.Value
	}
	return o.CurrentMode
}

// Model is where the session's model stands: the value of the option of
// category "model", else CurrentModel.
func (o SessionOffer) Model() string {
	if opt, ok := o.byCategory("model"); ok {
		return opt.Value
	}
	return o.CurrentModel
}

// Ways a ConfigCall is made.
const (
	// ConfigViaOption is session/set_config_option.
	ConfigViaOption = "option"
	// ConfigViaMode is session/set_mode.
	ConfigViaMode = "mode"
	// ConfigViaModel is the legacy session/set_model.
	ConfigViaModel = "model"
)

// ConfigCall is one call that applies a setting.
type ConfigCall struct {
	// Via is ConfigViaOption, ConfigViaMode or ConfigViaModel.
	Via string
	// OptionID is the option's id (ConfigViaOption).
	OptionID string
	// Boolean marks a boolean option: Value is "true" or "false".
	Boolean bool
	// Value is the value (or mode or model id) to set.
	Value string
	// Setting names what the operator set, for messages: "mode", "model",
	// or `config option "effort"`.
	Setting string
}

// refusal is the error of a setting the runtime cannot take: a
// configuration refused at start (docs/behaviour.md#session-configuration).
func refusal(format string, args ...any) *AgentError {
	return NewError(KindAgentNotFound, "session configuration refused: "+fmt.Sprintf(format, args...)).WithReason(ReasonNotOffered)
}

// offered renders a list of values for a refusal message.
func offered(vs []string) string {
	if len(vs) == 0 {
		return "none"
	}
	return strings.Join(vs, ", ")
}

// PlanSessionConfig returns the calls that put a session answering offer
// into the state c asks for, in order (mode, model, then the options), or
// a refusal (KindAgentNotFound) naming the setting and the values the
// runtime offers. A setting already in place needs no call but is still
// verified (VerifySessionConfig).
func PlanSessionConfig(c SessionConfig, offer SessionOffer) ([]ConfigCall, error) {
	var calls []ConfigCall
	set := map[string]string{} // option id → the value a call sets
	addOption := func(opt OfferedOption, value, setting string) error {
		if prev, ok := set[opt.ID]; ok {
			if prev != value {
				return refusal("%s sets option %q to %q, already set to %q", setting, opt.ID, value, prev)
			}
			return nil
		}
		if opt.Boolean {
			if value != "true" && value != "false" {
				return refusal("%s: %q is not offered; the runtime offers true, false", setting, value)
			}
		} else if !slices.Contains(opt.Values, value) {
			return refusal("%s: %q is not offered; the runtime offers %s", setting, value, offered(opt.Values))
		}
		set[opt.ID] = value
		if opt.Value != value {
			calls = append(calls, ConfigCall{Via: ConfigViaOption, OptionID: opt.ID, Boolean: opt.Boolean, Value: value, Setting: setting})
		}
		return nil
	}
	if c.Mode != "" {
		if opt, ok := offer.byCategory("mode"); ok {
			if err := addOption(opt, c.Mode, "mode"); err != nil {
				return nil, err
			}
		} else if len(offer.Modes) > 0 {
			if !slices.Contains(offer.Modes, c.Mode) {
				return nil, refusal("mode: %q is not offered; the runtime offers %s", c.Mode, offered(offer.Modes))
			}
			if offer.CurrentMode != c.Mode {
				calls = append(calls, ConfigCall{Via: ConfigViaMode, Value: c.Mode, Setting: "mode"})
			}
		} else {
			return nil, refusal("mode: %q cannot be set; the runtime offers no modes", c.Mode)
		}
	}
	if c.Model != "" {
		if opt, ok := offer.byCategory("model"); ok {
			if err := addOption(opt, c.Model, "model"); err != nil {
				return nil, err
			}
		} else if len(offer.Models) > 0 {
			if !slices.Contains(offer.Models, c.Model) {
				return nil, refusal("model: %q is not offered; the runtime offers %s", c.Model, offered(offer.Models))
			}
			if offer.CurrentModel != c.Model {
				calls = append(calls, ConfigCall{Via: ConfigViaModel, Value: c.Model, Setting: "model"})
			}
		} else {
			return nil, refusal("model: %q cannot be set; the runtime offers no models", c.Model)
		}
	}
	for _, o := range c.Options {
		setting := fmt.Sprintf("config option %q", o.ID)
		opt, ok := offer.option(o.ID)
		if !ok {
			ids := make([]string, 0, len(offer.Options))
			for _, x := range offer.Options {
				ids = append(ids, x.ID)
			}
			return nil, refusal("%s does not exist; the runtime offers options %s", setting, offered(ids))
		}
		if err := addOption(opt, o.Value, setting); err != nil {
			return nil, err
		}
	}
	return calls, nil
}

// VerifySessionConfig checks, against the session's state after the calls
// were answered, that every setting of c took. A setting that did not is a
// KindAgentNotFound error naming it, what it asked for and where the
// session stands.
func VerifySessionConfig(c SessionConfig, state SessionOffer) error {
	notTaken := func(setting, want, got string) error {
		return refusal("%s %q did not take: the session answered %q", setting, want, got)
	}
	if c.Mode != "" && state.Mode() != c.Mode {
		return notTaken("mode", c.Mode, state.Mode())
	}
	if c.Model != "" && state.Model() != c.Model {
		return notTaken("model", c.Model, state.Model())
	}
	for _, o := range c.Options {
		opt, ok := state.option(o.ID)
		if !ok {
			return refusal("config option %q %q did not take: the session answered no such option", o.ID, o.Value)
		}
		if opt.Value != o.Value {
			return notTaken(fmt.Sprintf("config option %q", o.ID), o.Value, opt.Value)
		}
	}
	return nil
}

// CheckBeforeSession decides, before any session is created, whether the
// runtime can take c's system prompt and additional directories: modes are
// the system prompt modes it advertises (nil: no systemPrompt capability),
// dirs whether it advertises additionalDirectories. A refusal is
// KindAgentNotFound and names what the runtime offers.
func CheckBeforeSession(c SessionConfig, modes []string, dirs bool) error {
	if len(c.AdditionalDirectories) > 0 && !dirs {
		return refusal("additional directories: the runtime does not advertise sessionCapabilities.additionalDirectories")
	}
	if c.SystemPrompt == "" {
		if c.SystemPromptMode != "" {
			return refusal("system prompt mode %q is set without a system prompt", c.SystemPromptMode)
		}
		return nil
	}
	mode := c.EffectiveSystemPromptMode()
	if len(modes) == 0 {
		return refusal("system prompt (%s): the runtime does not advertise sessionCapabilities.systemPrompt", mode)
	}
	if !slices.Contains(modes, mode) {
		return refusal("system prompt mode %q is not offered; the runtime offers %s", mode, offered(modes))
	}
	return nil
}

// SessionPosture is where a session's configuration stands once the
// settings were applied (docs/behaviour.md#session-configuration): its
// mode, its model and every option with its value.
type SessionPosture struct {
	// Mode is the session's mode, "" when the runtime reports none.
	Mode string `json:"mode,omitempty"`
	// Model is the session's model, "" when the runtime reports none.
	Model string `json:"model,omitempty"`
	// Config is every configuration option with its value, in the
	// runtime's order.
	Config []ConfigSetting `json:"config,omitempty"`
}

// Posture is the posture the offer describes.
func (o SessionOffer) Posture() SessionPosture {
	p := SessionPosture{Mode: o.Mode(), Model: o.Model()}
	for _, opt := range o.Options {
		p.Config = append(p.Config, ConfigSetting{ID: opt.ID, Value: opt.Value})
	}
	return p
}

// IsZero reports whether the posture says nothing.
func (p SessionPosture) IsZero() bool { return p.Mode == "" && p.Model == "" && len(p.Config) == 0 }

// Text renders the posture for a person: "mode default; model sonnet;
// config mode=default, model=sonnet".
func (p SessionPosture) Text() string {
	var parts []string
	if p.Mode != "" {
		parts = append(parts, "mode "+p.Mode)
	}
	if p.Model != "" {
		parts = append(parts, "model "+p.Model)
	}
	if len(p.Config) > 0 {
		kv := make([]string, 0, len(p.Config))
		for _, s := range p.Config {
			kv = append(kv, s.ID+"="+s.Value)
		}
		parts = append(parts, "config "+strings.Join(kv, ", "))
	}
	return strings.Join(parts, "; ")
}

// MsgSessionPosturePrefix starts the once-per-session notice of the
// session's posture.
const MsgSessionPosturePrefix = "session configuration: "

// clone returns a copy sharing no slice with c.
func (c SessionConfig) clone() SessionConfig {
	c.Options = slices.Clone(c.Options)
	c.AdditionalDirectories = slices.Clone(c.AdditionalDirectories)
	return c
}
