package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

func TestReplyJSON(t *testing.T) {
	cases := []struct {
		name, reply, want string
		ok                bool
	}{
		{"fenced", "Done.\n```json\n{\"done\": true}\n```\n", `{"done":true}`, true},
		{"last fence wins", "```json\n{\"a\":1}\n```\nthen\n```json\n{\"a\":2}\n```", `{"a":2}`, true},
		{"fence without info", "```\n{\"a\":1}\n```", `{"a":1}`, true},
		{"bare nested", `I made it: {"a":{"b":1},"c":[1]} ok`, `{"a":{"b":1},"c":[1]}`, true},
		{"last bare", `{"a":1} and {"a":2}`, `{"a":2}`, true},
		{"fence beats bare", "```json\n{\"a\":1}\n```\n{\"a\":2}", `{"a":1}`, true},
		{"none", "no json {here", "", false},
		{"array is not an object", "```json\n[1]\n```", "", false},
	}
	for _, c := range cases {
		got, ok := domain.ReplyJSON(c.reply)
		if ok != c.ok || string(got) != c.want {
			t.Errorf("%s: ReplyJSON = %s, %v; want %s, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestIsResultToolRequest(t *testing.T) {
	for _, title := range domain.ResultToolTitles {
		if !domain.IsResultToolRequest(domain.PermissionRequest{Kind: domain.ToolOther, Title: " " + title}) {
			t.Errorf("%q is the result tool", title)
		}
	}
	// Each measured form, as its runtime sends it
	// (docs/runtimes.md#structured-results-per-runtime).
	for runtime, r := range map[string]domain.PermissionRequest{
		"Claude Code":          {Kind: domain.ToolOther, Title: "mcp__acpdrive-result__submit_result"},
		"Gemini CLI, Qwen":     {Kind: domain.ToolOther, Title: "submit_result (acpdrive-result MCP Server)"},
		"codex-acp 2.x":        {Kind: domain.ToolExecute, Title: "mcp.acpdrive-result.submit_result"},
		"codex-acp 0.16":       {Kind: domain.ToolOther, Title: "Tool: acpdrive-result/submit_result"},
		"codex-acp 2.x, other": {Kind: domain.ToolOther, Title: "mcp.acpdrive-result.submit_result"},
		// A result's own keys may look like paths or a command.
		"path-like arguments": {Kind: domain.ToolOther, Title: "mcp__acpdrive-result__submit_result",
			Paths: []domain.PermissionPath{{Path: "/etc/passwd"}}, Command: "make test"},
	} {
		if !domain.IsResultToolRequest(r) {
			t.Errorf("%s: %+v is the result tool", runtime, r)
		}
	}
	for _, r := range []domain.PermissionRequest{
		{Kind: domain.ToolOther, Title: "mcp__acpdrive-results__submit_result"},
		{Kind: domain.ToolOther, Title: "mcp__other__submit_result"},
		{Kind: domain.ToolOther, Title: "submit_result"},
		{Kind: domain.ToolOther, Title: "mcp__acpdrive-result__submit_result2"},
		{Kind: domain.ToolExecute, Title: "mcp__acpdrive-result__submit_result"},
		{Kind: domain.ToolExecute, Title: "submit_result (acpdrive-result MCP Server)"},
		{Kind: domain.ToolExecute, Title: "Tool: acpdrive-result/submit_result"},
		{Kind: domain.ToolEdit, Title: "mcp.acpdrive-result.submit_result"},
		{Kind: domain.ToolExecute, Title: "mcp.other.submit_result"},
		{Kind: domain.ToolExecute, Title: ""},
		{Kind: domain.ToolOther, Title: "Tool: other/submit_result"},
		{Kind: domain.ToolOther, Title: "Approve MCP tool call"},
		{Kind: domain.ToolOther, Title: `{"done":true}`},
		// Forms no runtime was seen to use are not the result tool.
		{Kind: domain.ToolOther, Title: "acpdrive-result.submit_result"},
		{Kind: domain.ToolOther, Title: "acpdrive-result/submit_result"},
		{Kind: domain.ToolOther, Title: "mcp_acpdrive-result_submit_result"},
		{Kind: domain.ToolOther, Title: "acpdrive-result_submit_result"},
	} {
		if domain.IsResultToolRequest(r) {
			t.Errorf("%+v is not the result tool", r)
		}
	}
}

// TestResultTurns: output_schema_turns reads each (also "") and last;
// any other value is one error finding, the same in a configuration and
// in session settings (docs/behaviour.md#structured-results).
func TestResultTurns(t *testing.T) {
	for _, c := range []struct {
		in   string
		want domain.ResultTurns
		each bool
		err  bool
	}{
		{"", domain.ResultTurnsEach, true, false},
		{"each", domain.ResultTurnsEach, true, false},
		{"last", domain.ResultTurnsLast, false, false},
		{"Last", "", true, true},
		{"all", "", true, true},
	} {
		got, err := domain.ParseResultTurns(c.in)
		assert.Equal(t, c.want, got, c.in)
		assert.Equal(t, c.err, err != nil, c.in)
		assert.Equal(t, c.each, domain.ResultTurns(c.in).EachTurn(), c.in)

		cfg := domain.DefaultConfig()
		cfg.Command = []string{"x"}
		cfg.OutputSchemaTurns = c.in
		set := cfg.SessionSettings()
		assert.Equal(t, domain.ResultTurns(c.in), set.OutputSchemaTurns)
		for _, fs := range [][]domain.Finding{cfg.Validate(), set.Validate()} {
			if !c.err {
				assert.Empty(t, fs, c.in)
				continue
			}
			want := domain.Finding{Severity: domain.SeverityError, Check: domain.CheckOutputSchemaTurnsInvalid,
				Message: `agent.output_schema_turns "` + c.in + `" is neither each nor last`}
			assert.Equal(t, []domain.Finding{want}, fs, c.in)
		}
	}
}
