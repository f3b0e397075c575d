package config

import (
	yaml "go.yaml.in/yaml/v3"

	"github.com/acpdrive/acpdrive/domain"
)

// sessionKey reads the agent block's session configuration keys
// (docs/behaviour.md#session-configuration): agent.mode, agent.model,
// agent.config_options (a mapping of option id to value, kept in document
// order), agent.additional_directories (a list; a relative entry resolves
// against the WORKFLOW.md directory), agent.system_prompt and
// agent.system_prompt_mode.
func (l *loader) sessionKey(path string, e kv) {
	c := &l.cfg.Session
	switch e.key {
	case "mode":
		l.setStr(path, e.val, &c.Mode)
	case "model":
		l.setStr(path, e.val, &c.Model)
	case "system_prompt":
		l.setStr(path, e.val, &c.SystemPrompt)
	case "system_prompt_mode":
		l.setStr(path, e.val, &c.SystemPromptMode)
	case "additional_directories":
		var dirs []string
		l.setStrList(path, e.val, &dirs)
		c.AdditionalDirectories = nil
		for _, d := range dirs {
			c.AdditionalDirectories = append(c.AdditionalDirectories, l.resolvePath(d))
		}
	case "config_options":
		l.configOptions(path, e.val)
	}
}

// configOptions reads agent.config_options: option id → value, a string or
// a boolean (written "true"/"false" on the wire's terms).
func (l *loader) configOptions(path string, n *yaml.Node) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.wrongType(path, n, "a mapping")
		return
	}
	var out []domain.ConfigSetting
	for _, e := range l.entries(path, n) {
		v := resolve(e.val)
		switch {
		case isString(v):
			out = append(out, domain.ConfigSetting{ID: e.key, Value: v.Value})
		case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool":
			var b bool
			_ = v.Decode(&b)
			val := "false"
			if b {
				val = "true"
			}
			out = append(out, domain.ConfigSetting{ID: e.key, Value: val})
		default:
			l.wrongType(path+"."+e.key, v, "a string or a boolean")
		}
	}
	l.cfg.Session.Options = out
}
