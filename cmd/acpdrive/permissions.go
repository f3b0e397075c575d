package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

// permissionsFlag reads --permissions (docs/behaviour.md#permission-posture):
// refuse, read, edit or rules:FILE, whose file is read and checked here,
// each fault with its line.
func permissionsFlag(v string) (domain.PermissionPolicy, error) {
	p, err := domain.ParsePermissionPolicy(v)
	if err != nil {
		return p, fmt.Errorf("--permissions: %w", err)
	}
	if p.Preset != domain.PresetRules {
		return p, nil
	}
	if abs, err := filepath.Abs(p.Source); err == nil {
		p.Source = abs
	}
	p, findings := config.LoadPermissionRules(p.Source)
	if err := domain.FindingsError(findings); err != nil {
		return p, fmt.Errorf("--permissions: %w", err)
	}
	return p, nil
}

// countPermission counts a permission_decision event for run_result.
func (p *printer) countPermission(ev domain.Event) {
	if ev.Type != domain.EventPermissionDecision || ev.Permission == nil {
		return
	}
	if p.permissions == nil {
		p.permissions = map[string]int{}
	}
	p.permissions[string(ev.Permission.Decision)]++
}

// permissionCounts is the human run result's "allow 1, refuse 2".
func permissionCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
