package domain_test

import (
	"slices"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

func TestDefaultConfig(t *testing.T) {
	c := domain.DefaultConfig()
	tests := []struct {
		name      string
		got, want any
	}{
		{"Kind", c.Kind, "agent-client-protocol"},
		{"MaxTurns", c.MaxTurns, 20},
		{"TurnTimeout", c.TurnTimeout, time.Hour},
		{"ReadTimeout", c.ReadTimeout, 5 * time.Second},
		{"StallTimeout", c.StallTimeout, 5 * time.Minute},
		{"StopGrace", c.StopGrace, 5 * time.Second},
		{"MaxRetryBackoff", c.MaxRetryBackoff, 5 * time.Minute},
		{"MaxConcurrentAgents", c.MaxConcurrentAgents, 10},
		{"SSHStrictHostKeyChecking", c.SSHStrictHostKeyChecking, "accept-new"},
		{"Command", len(c.Command), 0},
		{"MCPConfig", c.MCPConfig, ""},
		{"SSHHosts", len(c.SSHHosts), 0},
		{"SSHPassEnv", len(c.SSHPassEnv), 0},
		{"Remote", c.Remote(), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestConfigTimeouts(t *testing.T) {
	tests := []struct {
		read     time.Duration
		wantRead time.Duration
		wantInit time.Duration
	}{
		{5 * time.Second, 5 * time.Second, 60 * time.Second},
		{0, 30 * time.Second, 60 * time.Second},
		{-time.Second, 30 * time.Second, 60 * time.Second},
		{60 * time.Second, 60 * time.Second, 60 * time.Second},
		{90 * time.Second, 90 * time.Second, 90 * time.Second},
		{time.Millisecond, time.Millisecond, 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.read.String(), func(t *testing.T) {
			c := domain.DefaultConfig()
			c.ReadTimeout = tt.read
			if got := c.EffectiveReadTimeout(); got != tt.wantRead {
				t.Errorf("EffectiveReadTimeout() = %s, want %s", got, tt.wantRead)
			}
			if got := c.InitializeTimeout(); got != tt.wantInit {
				t.Errorf("InitializeTimeout() = %s, want %s", got, tt.wantInit)
			}
		})
	}
}

func TestConfigRemote(t *testing.T) {
	c := domain.DefaultConfig()
	if c.Remote() {
		t.Errorf("default config is remote")
	}
	c.SSHHosts = []string{"build-1"}
	if !c.Remote() {
		t.Errorf("config with ssh hosts is not remote")
	}
}

func TestConfigStrictHostKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"accept-new", "accept-new"},
		{"yes", "yes"},
		{"no", "no"},
		{"", "accept-new"},
		{"ask", "accept-new"},
		{"YES", "accept-new"},
	}
	for _, tt := range tests {
		c := domain.Config{SSHStrictHostKeyChecking: tt.in}
		if got := c.EffectiveSSHStrictHostKeyChecking(); got != tt.want {
			t.Errorf("EffectiveSSHStrictHostKeyChecking(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	valid := func() domain.Config {
		c := domain.DefaultConfig()
		c.Command = []string{"gemini", "--experimental-acp"}
		return c
	}
	cmdErr := domain.Finding{Severity: domain.SeverityError, Check: "agent.command.required",
		Message: `agent.command is required for agent kind "agent-client-protocol"`}
	graceErr := domain.Finding{Severity: domain.SeverityError, Check: "agent.stop_grace_ms.non_positive",
		Message: "agent.stop_grace_ms must be positive"}
	hostKeyWarn := func(v string) domain.Finding {
		return domain.Finding{Severity: domain.SeverityWarning, Check: "worker.ssh_strict_host_key_checking.invalid",
			Message: `worker.ssh_strict_host_key_checking "` + v + `" is not one of accept-new, yes, no; using accept-new`}
	}
	tests := []struct {
		name       string
		mutate     func(*domain.Config)
		want       []domain.Finding
		wantErrors bool
	}{
		{"valid", func(*domain.Config) {}, nil, false},
		{"command nil", func(c *domain.Config) { c.Command = nil }, []domain.Finding{cmdErr}, true},
		{"command empty list", func(c *domain.Config) { c.Command = []string{} }, []domain.Finding{cmdErr}, true},
		{"command blank words", func(c *domain.Config) { c.Command = []string{"", "  \t"} }, []domain.Finding{cmdErr}, true},
		{"stop grace zero", func(c *domain.Config) { c.StopGrace = 0 }, []domain.Finding{graceErr}, true},
		{"stop grace negative", func(c *domain.Config) { c.StopGrace = -time.Second }, []domain.Finding{graceErr}, true},
		{"stop grace 1ns", func(c *domain.Config) { c.StopGrace = 1 }, nil, false},
		{"host key yes", func(c *domain.Config) { c.SSHStrictHostKeyChecking = "yes" }, nil, false},
		{"host key no", func(c *domain.Config) { c.SSHStrictHostKeyChecking = "no" }, nil, false},
		{"host key unset", func(c *domain.Config) { c.SSHStrictHostKeyChecking = "" }, nil, false},
		{"host key invalid", func(c *domain.Config) { c.SSHStrictHostKeyChecking = "ask" },
			[]domain.Finding{hostKeyWarn("ask")}, false},
		{"everything wrong, fixed order", func(c *domain.Config) {
			c.Command = nil
			c.StopGrace = 0
			c.SSHStrictHostKeyChecking = "maybe"
		}, []domain.Finding{cmdErr, graceErr, hostKeyWarn("maybe")}, true},
		{"zero config", func(c *domain.Config) { *c = domain.Config{} }, []domain.Finding{cmdErr, graceErr}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.mutate(&c)
			got := c.Validate()
			if !slices.Equal(got, tt.want) {
				t.Errorf("Validate() = %+v\nwant        %+v", got, tt.want)
			}
			if domain.HasErrors(got) != tt.wantErrors {
				t.Errorf("HasErrors = %v, want %v", domain.HasErrors(got), tt.wantErrors)
			}
		})
	}
}
