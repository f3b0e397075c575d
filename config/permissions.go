package config

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/acpdrive/acpdrive/domain"
)

// permissions reads agent.permissions: "refuse", "read", "edit" or
// "rules:FILE" (docs/behaviour.md#permission-posture). A relative rules
// file resolves against the WORKFLOW.md directory; the file is read and
// each of its faults is a finding with the file's line.
func (l *loader) permissions(path string, n *yaml.Node) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if !isString(n) {
		l.wrongType(path, n, `a string (refuse, read, edit or "rules:FILE")`)
		return
	}
	p, err := domain.ParsePermissionPolicy(n.Value)
	if err != nil {
		l.errorf(domain.CheckPermissionsInvalid, path, n, "%v", err)
		return
	}
	if p.Preset == domain.PresetRules {
		p.Source = l.resolvePath(p.Source)
		var findings []domain.Finding
		p, findings = LoadPermissionRules(p.Source)
		for _, f := range findings {
			l.errorf(f.Check, path, n, "%s", f.Message)
		}
	}
	l.cfg.Permissions = p
}

// LoadPermissionRules reads and parses a rules file
// (docs/behaviour.md#permission-rules). The policy holds its rules when
// the file has no fault; otherwise its rules are empty (a session refuses
// to start with it) and each fault is an error finding naming the file
// and the line.
func LoadPermissionRules(file string) (domain.PermissionPolicy, []domain.Finding) {
	p := domain.PermissionPolicy{Preset: domain.PresetRules, Source: file}
	bad := func(msg string) []domain.Finding {
		return []domain.Finding{{Severity: domain.SeverityError, Check: domain.CheckPermissionsInvalid, Message: msg}}
	}
	data, tooLarge, err := readBounded(file)
	switch {
	case err != nil:
		return p, bad(fmt.Sprintf("the rules file cannot be read: %v", err))
	case tooLarge:
		return p, bad(fmt.Sprintf("the rules file %s is larger than the %d-byte limit", file, MaxFileBytes))
	}
	rules, errs := domain.ParsePermissionRules(string(data))
	var fs []domain.Finding
	for _, e := range errs {
		fs = append(fs, bad(fmt.Sprintf("%s:%d: %s", file, e.Line, e.Message))...)
	}
	p.Rules = rules
	return p, fs
}
