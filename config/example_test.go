package config_test

import (
	"fmt"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

func ExampleParse() {
	workflow := []byte(`---
agent:
  command: gemini --acp -m "gemini-2.5-pro"
  turn_timeout_ms: "30m"
agent-client-protocol:
  mcp_config: ./mcp-servers.json
  effort: high
---
You are working on {{ .issue.identifier }}.
`)
	cfg, findings := config.Parse(workflow, "/srv/flows/WORKFLOW.md")
	fmt.Printf("%q %s\n", cfg.Command, cfg.MCPConfig)
	for _, f := range findings {
		fmt.Println(f.Severity, f.Check)
	}
	fmt.Println("usable:", !domain.HasErrors(findings))
	// Output:
	// ["gemini" "--acp" "-m" "gemini-2.5-pro"] /srv/flows/mcp-servers.json
	// error config.wrong_type
	// warning agent.effort.not_forwarded
	// usable: false
}
