package domain_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestNewCapabilities(t *testing.T) {
	tests := []struct {
		name             string
		remote, measured bool
		want             [4]domain.CapabilityState
		wantGaps         []domain.CapabilityLabel
		wantNotice       string
	}{
		{
			name: "local unmeasured", remote: false, measured: false,
			want:       [4]domain.CapabilityState{domain.CapProtocol, domain.CapGap, domain.CapProtocol, domain.CapProtocol},
			wantGaps:   []domain.CapabilityLabel{domain.CapTokenCounts},
			wantNotice: "this session started with a declared capability gap in: token counts",
		},
		{
			name: "local measured", remote: false, measured: true,
			want: [4]domain.CapabilityState{domain.CapProtocol, domain.CapOurs, domain.CapProtocol, domain.CapProtocol},
		},
		{
			name: "remote", remote: true, measured: false,
			want:       [4]domain.CapabilityState{domain.CapGap, domain.CapGap, domain.CapProtocol, domain.CapProtocol},
			wantGaps:   []domain.CapabilityLabel{domain.CapToolServers, domain.CapTokenCounts},
			wantNotice: "this session started with a declared capability gap in: tool servers, token counts",
		},
		{
			name: "remote measured (not produced in practice)", remote: true, measured: true,
			want:       [4]domain.CapabilityState{domain.CapGap, domain.CapOurs, domain.CapProtocol, domain.CapProtocol},
			wantGaps:   []domain.CapabilityLabel{domain.CapToolServers},
			wantNotice: "this session started with a declared capability gap in: tool servers",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := domain.NewCapabilities(tt.remote, tt.measured)
			for i, l := range domain.CapabilityOrder {
				if got := c.State(l); got != tt.want[i] {
					t.Errorf("State(%q) = %q, want %q", l, got, tt.want[i])
				}
			}
			if got := c.Gaps(); !slices.Equal(got, tt.wantGaps) {
				t.Errorf("Gaps() = %q, want %q", got, tt.wantGaps)
			}
			notice, ok := c.Notice()
			if ok != (tt.wantNotice != "") || notice != tt.wantNotice {
				t.Errorf("Notice() = (%q, %v), want %q", notice, ok, tt.wantNotice)
			}
		})
	}
}

func TestCapabilitiesLower(t *testing.T) {
	tests := []struct {
		name        string
		start       domain.Capabilities
		lower       []domain.CapabilityLabel
		wantChanged []bool
		wantGaps    []domain.CapabilityLabel
		wantNotice  string
	}{
		{
			name:        "protocol to gap",
			start:       domain.NewCapabilities(false, true),
			lower:       []domain.CapabilityLabel{domain.CapSessionContinuation},
			wantChanged: []bool{true},
			wantGaps:    []domain.CapabilityLabel{domain.CapSessionContinuation},
			wantNotice:  "this session started with a declared capability gap in: session continuation",
		},
		{
			name:        "ours to gap (source dropped)",
			start:       domain.NewCapabilities(false, true),
			lower:       []domain.CapabilityLabel{domain.CapTokenCounts},
			wantChanged: []bool{true},
			wantGaps:    []domain.CapabilityLabel{domain.CapTokenCounts},
		},
		{
			name:        "gap stays gap",
			start:       domain.NewCapabilities(true, false),
			lower:       []domain.CapabilityLabel{domain.CapToolServers, domain.CapTokenCounts},
			wantChanged: []bool{false, false},
			wantGaps:    []domain.CapabilityLabel{domain.CapToolServers, domain.CapTokenCounts},
		},
		{
			name:        "lowering twice changes once",
			start:       domain.NewCapabilities(false, false),
			lower:       []domain.CapabilityLabel{domain.CapAgentVersion, domain.CapAgentVersion},
			wantChanged: []bool{true, false},
			wantGaps:    []domain.CapabilityLabel{domain.CapTokenCounts, domain.CapAgentVersion},
		},
		{
			name:  "all lowered, fixed order in notice whatever the lowering order",
			start: domain.NewCapabilities(false, true),
			lower: []domain.CapabilityLabel{domain.CapAgentVersion, domain.CapSessionContinuation,
				domain.CapTokenCounts, domain.CapToolServers},
			wantChanged: []bool{true, true, true, true},
			wantGaps:    []domain.CapabilityLabel{domain.CapToolServers, domain.CapTokenCounts, domain.CapSessionContinuation, domain.CapAgentVersion},
			wantNotice:  "this session started with a declared capability gap in: tool servers, token counts, session continuation, agent version",
		},
		{
			name:        "unknown label changes nothing",
			start:       domain.NewCapabilities(false, true),
			lower:       []domain.CapabilityLabel{"warp drive", ""},
			wantChanged: []bool{false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.start
			for i, l := range tt.lower {
				before := c
				if got := c.Lower(l); got != tt.wantChanged[i] {
					t.Errorf("Lower(%q) = %v, want %v", l, got, tt.wantChanged[i])
				}
				// Never raises: every entry is at or below where it was.
				for _, each := range domain.CapabilityOrder {
					if rank(c.State(each)) > rank(before.State(each)) {
						t.Errorf("Lower(%q) raised %q from %q to %q", l, each, before.State(each), c.State(each))
					}
				}
				if tt.wantChanged[i] && c.State(l) != domain.CapGap {
					t.Errorf("State(%q) = %q after Lower, want gap", l, c.State(l))
				}
			}
			if got := c.Gaps(); !slices.Equal(got, tt.wantGaps) {
				t.Errorf("Gaps() = %q, want %q", got, tt.wantGaps)
			}
			if tt.wantNotice != "" {
				if n, ok := c.Notice(); !ok || n != tt.wantNotice {
					t.Errorf("Notice() = (%q, %v), want %q", n, ok, tt.wantNotice)
				}
			}
		})
	}
}

func rank(s domain.CapabilityState) int {
	switch s {
	case domain.CapProtocol:
		return 2
	case domain.CapOurs:
		return 1
	case domain.CapGap:
		return 0
	}
	return -1
}

func TestCapabilitiesValueSemantics(t *testing.T) {
	a := domain.NewCapabilities(false, true)
	b := a
	b.Lower(domain.CapAgentVersion)
	if a.State(domain.CapAgentVersion) != domain.CapProtocol {
		t.Errorf("lowering a copy changed the original")
	}
}

func TestCapabilitiesZeroAndUnknown(t *testing.T) {
	var c domain.Capabilities
	for _, l := range domain.CapabilityOrder {
		if c.State(l) != domain.CapProtocol {
			t.Errorf("zero value State(%q) = %q, want protocol", l, c.State(l))
		}
	}
	if _, ok := c.Notice(); ok {
		t.Errorf("zero value has a notice")
	}
	if g := c.Gaps(); g != nil {
		t.Errorf("zero value Gaps() = %q, want nil", g)
	}
	if s := c.State("nope"); s != "" {
		t.Errorf("State(unknown) = %q, want empty", s)
	}
}

func TestCapabilityOrderAndStrings(t *testing.T) {
	want := []domain.CapabilityLabel{"tool servers", "token counts", "session continuation", "agent version"}
	if !slices.Equal(domain.CapabilityOrder, want) {
		t.Fatalf("CapabilityOrder = %q, want %q", domain.CapabilityOrder, want)
	}
	if domain.CapProtocol != "protocol" || domain.CapOurs != "ours" || domain.CapGap != "gap" {
		t.Errorf("state strings changed")
	}
	if domain.MsgCapabilityLoweredLate != "capability lowered after the once-per-session notice" {
		t.Errorf("MsgCapabilityLoweredLate = %q", domain.MsgCapabilityLoweredLate)
	}

	// Changing the exported slice does not change the package's order.
	saved := slices.Clone(domain.CapabilityOrder)
	defer copy(domain.CapabilityOrder, saved)
	domain.CapabilityOrder[0], domain.CapabilityOrder[3] = domain.CapabilityOrder[3], domain.CapabilityOrder[0]
	c := domain.NewCapabilities(true, true)
	if got := c.Gaps(); !slices.Equal(got, []domain.CapabilityLabel{domain.CapToolServers}) {
		t.Errorf("Gaps() = %q after reordering the exported slice", got)
	}
}

func TestCapabilitiesMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		c    func() domain.Capabilities
		want string
	}{
		{
			name: "local unmeasured",
			c:    func() domain.Capabilities { return domain.NewCapabilities(false, false) },
			want: `[{"label":"tool servers","state":"protocol"},{"label":"token counts","state":"gap"},{"label":"session continuation","state":"protocol"},{"label":"agent version","state":"protocol"}]`,
		},
		{
			name: "measured with version lowered",
			c: func() domain.Capabilities {
				c := domain.NewCapabilities(false, true)
				c.Lower(domain.CapAgentVersion)
				return c
			},
			want: `[{"label":"tool servers","state":"protocol"},{"label":"token counts","state":"ours"},{"label":"session continuation","state":"protocol"},{"label":"agent version","state":"gap"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c()
			for _, v := range []any{c, &c, struct {
				C domain.Capabilities `json:"c"`
			}{c}} {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				got := string(b)
				if _, wrapped := v.(struct {
					C domain.Capabilities `json:"c"`
				}); wrapped {
					got = got[len(`{"c":`) : len(got)-1]
				}
				if got != tt.want {
					t.Errorf("json = %s\nwant   %s", got, tt.want)
				}
			}
		})
	}
}
