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
		{"MCPConfigType", c.MCPConfigType, ""},
		{"Effort", c.Effort, ""},
		{"MaxTokens", c.MaxTokens, int64(0)},
		{"TokenRatesPriced", c.TokenRatesPriced, false},
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
	kindErr := func(k string) domain.Finding {
		return domain.Finding{Severity: domain.SeverityError, Check: "agent.kind.unsupported",
			Message: `agent.kind "` + k + `" is not supported: acpdrive implements agent kind "agent-client-protocol" only`}
	}
	mcpTypeErr := func(found string) domain.Finding {
		return domain.Finding{Severity: domain.SeverityError, Check: "agent-client-protocol.mcp_config.wrong_type",
			Message: "agent-client-protocol.mcp_config: expected a string (a file path), found " + found}
	}
	effortWarn := domain.Finding{Severity: domain.SeverityWarning, Check: "agent.effort.not_forwarded",
		Message: `agent-client-protocol.effort has no effect: agent kind "agent-client-protocol" passes no reasoning level to its agent; where the agent takes a reasoning option on its command line, write it in agent.command`}
	usageWarn := domain.Finding{Severity: domain.SeverityWarning, Check: "agent.kind.no_usage_reporting",
		Message: `agent.max_tokens is set but agent kind "agent-client-protocol" has no journal source for the sessions this configuration produces (SSH): only a runtime that reports usage in its prompt results can be measured, and for any other the per-issue token ceiling can never be reached`}
	costWarn := domain.Finding{Severity: domain.SeverityWarning, Check: "agent.kind.no_cost_estimate",
		Message: `token_rates prices agent kind "agent-client-protocol", which reports no token usage for the sessions this configuration produces: no cost can be estimated for it`}
	remote := func(c *domain.Config) { c.SSHHosts = []string{"build-1"} }
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
		{"kind empty counts as acp", func(c *domain.Config) { c.Kind = "" }, nil, false},
		{"kind other", func(c *domain.Config) { c.Kind = "claude-code" }, []domain.Finding{kindErr("claude-code")}, true},
		{"kind case matters", func(c *domain.Config) { c.Kind = "Agent-Client-Protocol" },
			[]domain.Finding{kindErr("Agent-Client-Protocol")}, true},
		{"kind quoted in message", func(c *domain.Config) { c.Kind = "a\"b" }, []domain.Finding{kindErr(`a\"b`)}, true},
		{"mcp_config string", func(c *domain.Config) { c.MCPConfig = "/w/mcp.json" }, nil, false},
		{"mcp_config mapping", func(c *domain.Config) { c.MCPConfigType = "a mapping" },
			[]domain.Finding{mcpTypeErr("a mapping")}, true},
		{"mcp_config integer", func(c *domain.Config) { c.MCPConfigType = "an integer" },
			[]domain.Finding{mcpTypeErr("an integer")}, true},
		{"effort set", func(c *domain.Config) { c.Effort = "high" }, []domain.Finding{effortWarn}, false},
		{"effort false still set", func(c *domain.Config) { c.Effort = "false" }, []domain.Finding{effortWarn}, false},
		{"max_tokens local", func(c *domain.Config) { c.MaxTokens = 1000 }, nil, false},
		{"max_tokens zero remote", func(c *domain.Config) { remote(c) }, nil, false},
		{"max_tokens negative remote", func(c *domain.Config) { remote(c); c.MaxTokens = -1 }, nil, false},
		{"max_tokens remote", func(c *domain.Config) { remote(c); c.MaxTokens = 1 }, []domain.Finding{usageWarn}, false},
		{"token_rates local", func(c *domain.Config) { c.TokenRatesPriced = true }, nil, false},
		{"token_rates remote", func(c *domain.Config) { remote(c); c.TokenRatesPriced = true },
			[]domain.Finding{costWarn}, false},
		{"everything wrong, fixed order", func(c *domain.Config) {
			c.Kind = "codex"
			c.Command = nil
			c.StopGrace = 0
			c.MCPConfigType = "a list"
			c.SSHStrictHostKeyChecking = "maybe"
			c.Effort = "low"
			remote(c)
			c.MaxTokens = 5
			c.TokenRatesPriced = true
		}, []domain.Finding{kindErr("codex"), cmdErr, graceErr, mcpTypeErr("a list"), hostKeyWarn("maybe"),
			effortWarn, usageWarn, costWarn}, true},
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

func TestConfigValidateIsPure(t *testing.T) {
	c := domain.DefaultConfig()
	c.Kind = "codex"
	c.Effort = "high"
	first := c.Validate()
	for range 3 {
		if got := c.Validate(); !slices.Equal(got, first) {
			t.Fatalf("Validate() changed between calls: %+v then %+v", first, got)
		}
	}
}

func TestFindingsError(t *testing.T) {
	warn := domain.Finding{Severity: domain.SeverityWarning, Check: "w", Message: "a warning"}
	e1 := domain.Finding{Severity: domain.SeverityError, Check: "e1", Message: "first"}
	e2 := domain.Finding{Severity: domain.SeverityError, Check: "e2", Message: "second"}
	tests := []struct {
		name string
		in   []domain.Finding
		want string
	}{
		{"none", nil, ""},
		{"warnings only", []domain.Finding{warn}, ""},
		{"one error", []domain.Finding{warn, e1}, "first"},
		{"two errors in order", []domain.Finding{e2, warn, e1}, "second\nfirst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := domain.FindingsError(tt.in)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("FindingsError() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("FindingsError() = %v, want %q", err, tt.want)
			}
		})
	}
}
