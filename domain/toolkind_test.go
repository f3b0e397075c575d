package domain_test

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestNormalizeToolKind(t *testing.T) {
	tests := []struct {
		in   string
		want domain.ToolKind
	}{
		{"read", domain.ToolRead},
		{"edit", domain.ToolEdit},
		{"delete", domain.ToolDelete},
		{"move", domain.ToolMove},
		{"search", domain.ToolSearch},
		{"execute", domain.ToolExecute},
		{"think", domain.ToolThink},
		{"fetch", domain.ToolFetch},
		{"switch_mode", domain.ToolSwitchMode},
		{"other", domain.ToolOther},
		{"", domain.ToolOther},
		{"   ", domain.ToolOther},
		{"Execute", domain.ToolExecute},
		{" read\n", domain.ToolRead},
		{"switchMode", domain.ToolOther},
		{"write", domain.ToolOther},
		{"exec", domain.ToolOther},
		{"\x00read", domain.ToolOther},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := domain.NormalizeToolKind(tt.in); got != tt.want {
				t.Errorf("NormalizeToolKind(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestToolKindStrings(t *testing.T) {
	want := []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}
	got := []domain.ToolKind{domain.ToolRead, domain.ToolEdit, domain.ToolDelete, domain.ToolMove, domain.ToolSearch,
		domain.ToolExecute, domain.ToolThink, domain.ToolFetch, domain.ToolSwitchMode, domain.ToolOther}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("tool kind %d = %q, want %q", i, got[i], want[i])
		}
	}
}
