package refagent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCallBound bounds one mcpCall step: start, initialize, call, stop.
const mcpCallBound = 20 * time.Second

// mcpCall runs an mcpCall step and returns its report line.
func (a *agent) mcpCall(ctx context.Context, st *Step) string {
	report := func(status, text string) string { return "mcpCall " + st.MCPTool + " " + status + ": " + text }
	a.mu.Lock()
	servers := a.mcpServers
	a.mu.Unlock()
	var list []struct {
		Name    string   `json:"name"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Env     []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"env"`
	}
	_ = json.Unmarshal(servers, &list)
	for _, srv := range list {
		if srv.Name != st.MCPServer || srv.Command == "" {
			continue
		}
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = os.Environ()
		for _, e := range srv.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		ctx, cancel := context.WithTimeout(ctx, mcpCallBound)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "acpdrive-reference-agent", Version: Version}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return report("error", "connect: "+err.Error())
		}
		defer cs.Close()
		var args any
		if len(st.MCPArguments) > 0 {
			if err := json.Unmarshal(st.MCPArguments, &args); err != nil {
				return report("error", "arguments: "+err.Error())
			}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: st.MCPTool, Arguments: args})
		if err != nil {
			return report("error", err.Error())
		}
		var b strings.Builder
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
		if res.IsError {
			return report("error", b.String())
		}
		return report("ok", b.String())
	}
	return report("error", "no stdio MCP server named "+st.MCPServer+" was declared")
}
