package domain

import "strings"

// ConfigError is a configuration that Config.Validate (or a required
// option) refuses: nothing was launched. It is not an AgentError: no
// retry can fix it.
type ConfigError struct {
	// Findings are the error findings, in Validate's order.
	Findings []Finding
}

// Error joins the findings' messages, one per line.
func (e *ConfigError) Error() string {
	msgs := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		msgs[i] = f.Message
	}
	return "invalid configuration: " + strings.Join(msgs, "; ")
}
