package app

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// announcedWorkspace is the workspace an initialize answer announces:
// agentCapabilities._meta.qwen.workspaceCwd, as qwen serve announces the
// workspace it is bound to; "" when there is none or it is no absolute
// path (docs/behaviour.md#network).
func announcedWorkspace(resp acpwire.InitializeResponse) string {
	if len(resp.AgentCapabilities.Meta) == 0 {
		return ""
	}
	var meta struct {
		Qwen struct {
			WorkspaceCwd string `json:"workspaceCwd"`
		} `json:"qwen"`
	}
	if json.Unmarshal(resp.AgentCapabilities.Meta, &meta) != nil {
		return ""
	}
	w := meta.Qwen.WorkspaceCwd
	if domain.CheckRemoteWorkspacePath(w) != nil {
		return ""
	}
	return w
}

// cwd is the workspace the session's session/new, session/load or
// session/fork names: the announced one under Options.ServerWorkspace,
// else Options.Workspace.
func (s *Session) cwd() string {
	if s.opts.ServerWorkspace && s.conn.announced != "" {
		return s.conn.announced
	}
	return s.opts.Workspace
}
