package config

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/acpdrive/acpdrive/domain"
)

// ApplyAgent reads settings, the keys of a WORKFLOW.md's agent block
// written as one mapping (a JSON object, such as a batch task's
// "settings"; docs/behaviour.md#batch), over base: each key given replaces
// base's value, read and checked exactly as Load reads agent.KEY (the
// same checks and messages, without line numbers); a key not given keeps
// base's value. A relative path (agent.output_schema,
// agent.additional_directories, agent.permissions' rules:FILE) resolves
// against dir, as a WORKFLOW.md's resolves against its directory.
//
// The findings are the reader's own, then domain.Config.Validate's of the
// result; the configuration is fit to use only when domain.HasErrors is
// false. Settings that are null or empty change nothing.
func ApplyAgent(base domain.Config, settings []byte, dir string) (domain.Config, []domain.Finding) {
	cfg := cloneConfig(base)
	var compact bytes.Buffer
	if json.Valid(settings) && json.Compact(&compact, settings) == nil {
		settings = compact.Bytes() // no layout the YAML reader could stumble on
	}
	l := &loader{cfg: cfg, dir: dir, noLines: true}
	root, fault := parseYAML(settings)
	if fault != nil {
		return cfg, []domain.Finding{*fault}
	}
	if root != nil {
		l.block(keyAgent, root, l.agentKey)
	}
	findings := l.findings
	for _, f := range l.cfg.Validate() {
		if f.Check == domain.CheckCommandRequired && (l.errored["agent.command"] || l.errored["agent"]) {
			continue // the reader already said what is wrong with agent.command
		}
		findings = append(findings, f)
	}
	return l.cfg, findings
}

// cloneConfig is c sharing no slice or map with it that the agent block
// writes into.
func cloneConfig(c domain.Config) domain.Config {
	c.Command = slices.Clone(c.Command)
	c.Session.AdditionalDirectories = slices.Clone(c.Session.AdditionalDirectories)
	c.Session.Options = slices.Clone(c.Session.Options)
	c.Sandbox.Writable = slices.Clone(c.Sandbox.Writable)
	c.Permissions.Rules = slices.Clone(c.Permissions.Rules)
	c.SSHHosts = slices.Clone(c.SSHHosts)
	c.SSHPassEnv = slices.Clone(c.SSHPassEnv)
	return c
}
