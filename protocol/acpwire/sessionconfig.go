package acpwire

import (
	"encoding/json"
	"slices"
)

// Methods of the session configuration (docs/behaviour.md#session-configuration).
const (
	// MethodSessionSetConfigOption sets one configuration option.
	MethodSessionSetConfigOption = "session/set_config_option"
	// MethodSessionSetMode sets the session's mode (runtimes that offer
	// modes but no mode option).
	MethodSessionSetMode = "session/set_mode"
	// MethodSessionSetModel sets the legacy model (removed from the schema;
	// some runtimes still answer it).
	MethodSessionSetModel = "session/set_model"
)

// System prompt modes on the wire.
const (
	// SystemPromptAppend adds the text after the runtime's own prompt.
	SystemPromptAppend = "append"
	// SystemPromptOverride replaces the runtime's own prompt.
	SystemPromptOverride = "override"
)

// SystemPrompt is the systemPrompt of session/new, load, resume and fork:
// the mode and the text as content blocks.
type SystemPrompt struct {
	Mode    string         `json:"mode"`
	Content []ContentBlock `json:"content"`
}

// NewSystemPrompt is a system prompt of one text block; nil for no text.
func NewSystemPrompt(mode, text string) *SystemPrompt {
	if text == "" {
		return nil
	}
	return &SystemPrompt{Mode: mode, Content: []ContentBlock{{Type: "text", Text: text}}}
}

// SystemPromptModes lists the system prompt modes the capabilities
// advertise: nil without a systemPrompt marker; "append" for any marker
// (the schema's {}), then every key of its "mode" object ({"mode":
// {"override":{}}} adds "override").
func (s *SessionCapabilities) SystemPromptModes() []string {
	if s == nil {
		return nil
	}
	raw, ok := s.All["systemPrompt"]
	if !ok || !marker(raw) {
		return nil
	}
	modes := []string{SystemPromptAppend}
	var v struct {
		Mode json.RawMessage `json:"mode"`
	}
	if json.Unmarshal(raw, &v) == nil {
		for _, k := range ObjectKeys(v.Mode) {
			if !slices.Contains(modes, k) {
				modes = append(modes, k)
			}
		}
	}
	return modes
}

// CanAddDirectories reports whether additionalDirectories is advertised.
func (s *SessionCapabilities) CanAddDirectories() bool {
	return s != nil && marker(s.AdditionalDirectories)
}

// SetConfigOptionRequest is the params of session/set_config_option: a
// select's value id, or (Type "boolean") a boolean.
type SetConfigOptionRequest struct {
	SessionID string `json:"sessionId"`
	ConfigID  string `json:"configId"`
	Type      string `json:"type,omitempty"`
	Value     any    `json:"value"`
}

// SetConfigOptionResponse is the result of session/set_config_option: every
// option with its value.
type SetConfigOptionResponse struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// SetModeRequest is the params of session/set_mode.
type SetModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// SetModelRequest is the params of the legacy session/set_model.
type SetModelRequest struct {
	SessionID string `json:"sessionId"`
	ModelID   string `json:"modelId"`
}

// ContinueSessionResponse is the result of session/load and session/resume:
// all fields optional (a null result decodes to the zero value).
type ContinueSessionResponse struct {
	Modes         *SessionModeState `json:"modes,omitempty"`
	ConfigOptions []ConfigOption    `json:"configOptions,omitempty"`
	Models        *SessionModels    `json:"models,omitempty"`
}

// IsBoolean reports whether the option is of type boolean.
func (o ConfigOption) IsBoolean() bool { return o.Type == "boolean" }
