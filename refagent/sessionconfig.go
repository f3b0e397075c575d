package refagent

import (
	"encoding/json"
	"slices"
	"strconv"
)

// ConfigOffer makes the agent offer a session configuration and keep it
// per session (docs/reference-agent.md#session-configuration): session/new,
// session/load and session/resume answer the session's modes,
// configOptions and legacy models; session/set_config_option,
// session/set_mode and session/set_model change them (a value not offered
// is -32602) and answer as the schema says. Every request is in the --log
// file, so a test reads what arrived (systemPrompt, additionalDirectories,
// the set calls).
type ConfigOffer struct {
	// Modes are the availableModes; CurrentMode is where a session starts.
	Modes       []OfferedMode `json:"modes,omitempty"`
	CurrentMode string        `json:"currentMode,omitempty"`
	// Options are the configOptions, with the value a session starts at.
	Options []OfferedOption `json:"options,omitempty"`
	// Models are the legacy models list; CurrentModel where a session starts.
	Models       []string `json:"models,omitempty"`
	CurrentModel string   `json:"currentModel,omitempty"`
	// Sticky lists "id=value" settings set_config_option accepts without
	// changing anything (a setting that does not take).
	Sticky []string `json:"sticky,omitempty"`
}

// OfferedMode is one available mode.
type OfferedMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// OfferedOption is one configuration option: a select (Values) or, with
// Type "boolean", a boolean ("true"/"false" in CurrentValue).
type OfferedOption struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Category     string   `json:"category,omitempty"`
	Type         string   `json:"type,omitempty"`
	CurrentValue string   `json:"currentValue"`
	Values       []string `json:"values,omitempty"`
}

// configState is one session's configuration.
type configState struct {
	mode   string
	values map[string]string
	model  string
}

// wire shapes of the configuration.
type (
	wireModes struct {
		CurrentModeID  string        `json:"currentModeId"`
		AvailableModes []OfferedMode `json:"availableModes"`
	}
	wireModel struct {
		ModelID string `json:"modelId"`
		Name    string `json:"name"`
	}
	wireModels struct {
		CurrentModelID  string      `json:"currentModelId"`
		AvailableModels []wireModel `json:"availableModels"`
	}
	wireValue struct {
		Value string `json:"value"`
		Name  string `json:"name"`
	}
	wireOption struct {
		ID           string      `json:"id,omitempty"`
		ConfigID     string      `json:"configId,omitempty"` // v2's name of the id
		Name         string      `json:"name"`
		Category     string      `json:"category,omitempty"`
		Type         string      `json:"type"`
		CurrentValue any         `json:"currentValue"`
		Options      []wireValue `json:"options,omitempty"`
	}
	configResult struct {
		SessionID     string       `json:"sessionId,omitempty"`
		Modes         *wireModes   `json:"modes,omitempty"`
		ConfigOptions []wireOption `json:"configOptions,omitempty"`
		Models        *wireModels  `json:"models,omitempty"`
	}
)

// configOf returns session id's configuration, starting it from the offer.
// a.mu must be held.
func (a *agent) configOf(id string) *configState {
	if a.configs == nil {
		a.configs = map[string]*configState{}
	}
	if st := a.configs[id]; st != nil {
		return st
	}
	o := a.script.SessionConfig
	st := &configState{mode: o.CurrentMode, model: o.CurrentModel, values: map[string]string{}}
	for _, opt := range o.Options {
		st.values[opt.ID] = opt.CurrentValue
	}
	a.configs[id] = st
	return st
}

// configAnswer is a session answer carrying id's configuration; the
// sessionId is set only when withID.
func (a *agent) configAnswer(id string, withID bool) configResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	o := a.script.SessionConfig
	st := a.configOf(id)
	res := configResult{ConfigOptions: a.wireOptions(st)}
	if withID {
		res.SessionID = id
	}
	if len(o.Modes) > 0 {
		res.Modes = &wireModes{CurrentModeID: st.mode, AvailableModes: o.Modes}
	}
	if len(o.Models) > 0 {
		ms := &wireModels{CurrentModelID: st.model}
		for _, m := range o.Models {
			ms.AvailableModels = append(ms.AvailableModels, wireModel{ModelID: m, Name: m})
		}
		res.Models = ms
	}
	return res
}

// wireOptions renders st's options; a.mu must be held.
func (a *agent) wireOptions(st *configState) []wireOption {
	out := []wireOption{}
	for _, opt := range a.script.SessionConfig.Options {
		w := wireOption{ID: opt.ID, Name: opt.Name, Category: opt.Category, Type: "select", CurrentValue: st.values[opt.ID]}
		if a.v2.Load() {
			w.ID, w.ConfigID = "", opt.ID // the v2 schema names the id configId
		}
		if opt.Type == "boolean" {
			w.Type, w.CurrentValue = "boolean", st.values[opt.ID] == "true"
		} else {
			for _, v := range opt.Values {
				w.Options = append(w.Options, wireValue{Value: v, Name: v})
			}
		}
		out = append(out, w)
	}
	return out
}

// handleConfigCall serves session/set_config_option, session/set_mode and
// session/set_model for an agent with a ConfigOffer.
func (a *agent) handleConfigCall(m *inMsg) {
	var p struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Type      string          `json:"type"`
		Value     json.RawMessage `json:"value"`
		ModeID    string          `json:"modeId"`
		ModelID   string          `json:"modelId"`
	}
	if json.Unmarshal(orEmpty(m.Params), &p) != nil || p.SessionID == "" {
		a.writeResponse(m.ID, nil, invalidParams("sessionId must be a string"))
		return
	}
	o := a.script.SessionConfig
	a.mu.Lock()
	st := a.configOf(p.SessionID)
	var e *RPCError
	var res any = emptyObject
	var modeChanged string
	switch m.Method {
	case "session/set_mode":
		if !slices.ContainsFunc(o.Modes, func(md OfferedMode) bool { return md.ID == p.ModeID }) {
			e = invalidParams("mode " + strconv.Quote(p.ModeID) + " is not available")
			break
		}
		st.mode, modeChanged = p.ModeID, p.ModeID
		for _, opt := range o.Options {
			if opt.Category == "mode" {
				st.values[opt.ID] = p.ModeID
			}
		}
	case "session/set_model":
		if len(o.Models) == 0 {
			e = methodNotFound(m.Method)
		} else if !slices.Contains(o.Models, p.ModelID) {
			e = invalidParams("model " + strconv.Quote(p.ModelID) + " is not available")
		} else {
			st.model = p.ModelID
		}
	default:
		e = a.setOption(st, p.ConfigID, p.Type, p.Value)
		if e == nil {
			res = struct {
				ConfigOptions []wireOption `json:"configOptions"`
			}{a.wireOptions(st)}
		}
	}
	a.mu.Unlock()
	if e != nil {
		a.writeResponse(m.ID, nil, e)
		return
	}
	a.writeResponse(m.ID, res, nil)
	if modeChanged != "" {
		_ = a.writeMsg(outMsg{Method: "session/update", Params: updateParams{SessionID: p.SessionID,
			Update: modeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: modeChanged}}})
	}
}

// setOption sets one option of st; a.mu must be held.
func (a *agent) setOption(st *configState, id, typ string, raw json.RawMessage) *RPCError {
	o := a.script.SessionConfig
	i := slices.IndexFunc(o.Options, func(opt OfferedOption) bool { return opt.ID == id })
	if i < 0 {
		return invalidParams("no config option " + strconv.Quote(id))
	}
	opt := o.Options[i]
	var value string
	if opt.Type == "boolean" {
		var b bool
		if typ != "boolean" || json.Unmarshal(raw, &b) != nil {
			return invalidParams("option " + strconv.Quote(id) + " takes type boolean and a boolean value")
		}
		value = strconv.FormatBool(b)
	} else if a.v2.Load() && typ != "id" {
		// v2 names a select's value by type "id" (the v2 schema).
		return invalidParams("option " + strconv.Quote(id) + " takes type id on ACP v2")
	} else if json.Unmarshal(raw, &value) != nil || !slices.Contains(opt.Values, value) {
		return invalidParams("option " + strconv.Quote(id) + " offers no value " + string(raw))
	}
	if slices.Contains(o.Sticky, id+"="+value) {
		return nil
	}
	st.values[id] = value
	if opt.Category == "mode" {
		st.mode = value
	}
	if opt.Category == "model" && len(o.Models) > 0 && slices.Contains(o.Models, value) {
		st.model = value
	}
	return nil
}

// sessionConfigScenario offers what today's Claude adapter offers, in
// miniature: four modes, options mode, model, effort (thought_level), fast
// (boolean), the system prompt in both modes, additional directories,
// load and resume.
func sessionConfigScenario() scenario {
	return scenario{
		"Advertises loadSession, resume, close, additionalDirectories and systemPrompt {\"mode\":{\"override\":{}}}; sessions offer modes default, acceptEdits, plan, auto (current) and configOptions mode, model (default, opus, sonnet, haiku), effort (thought_level: default, low, high, max; max is accepted but does not take) and fast (boolean), kept per session and changed by session/set_config_option and session/set_mode.",
		func(s *Script) {
			s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":true,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},` +
				`"sessionCapabilities":{"resume":{},"close":{},"additionalDirectories":{},"systemPrompt":{"mode":{"override":{}}}}}`)}
			modes := []string{"default", "acceptEdits", "plan", "auto"}
			s.SessionConfig = &ConfigOffer{
				Modes: []OfferedMode{
					{ID: "default", Name: "Manual", Description: "Always ask before making changes"},
					{ID: "acceptEdits", Name: "Accept edits"}, {ID: "plan", Name: "Plan"},
					{ID: "auto", Name: "Auto", Description: "The agent handles permission decisions"},
				},
				CurrentMode: "auto",
				Options: []OfferedOption{
					{ID: "mode", Name: "Mode", Category: "mode", CurrentValue: "auto", Values: modes},
					{ID: "model", Name: "Model", Category: "model", CurrentValue: "default", Values: []string{"default", "opus", "sonnet", "haiku"}},
					{ID: "effort", Name: "Effort", Category: "thought_level", CurrentValue: "default", Values: []string{"default", "low", "high", "max"}},
					{ID: "fast", Name: "Fast", Category: "model_config", Type: "boolean", CurrentValue: "false"},
				},
				Sticky: []string{"effort=max"},
			}
		},
	}
}

// sessionModesScenario offers modes and the legacy models list but no
// configuration options, and the system prompt in append mode only.
func sessionModesScenario() scenario {
	return scenario{
		"Advertises loadSession and systemPrompt {} (append only), no additionalDirectories; sessions offer modes read-only, workspace-write, agent (current) and the legacy models gpt-a (current), gpt-b, and no configOptions; session/set_mode answers {} and sends current_mode_update, session/set_model answers {}.",
		func(s *Script) {
			s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":true,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},` +
				`"sessionCapabilities":{"systemPrompt":{}}}`)}
			s.SessionConfig = &ConfigOffer{
				Modes: []OfferedMode{
					{ID: "read-only", Name: "Read only", Description: "Requires approval to edit files"},
					{ID: "workspace-write", Name: "Workspace write"}, {ID: "agent", Name: "Agent"},
				},
				CurrentMode:  "agent",
				Models:       []string{"gpt-a", "gpt-b"},
				CurrentModel: "gpt-a",
			}
		},
	}
}
