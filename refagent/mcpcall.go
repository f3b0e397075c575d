package refagent

import (
	"context"
	"encoding/json"
	"math"
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
		if len(st.MCPArguments) == 0 && st.MCPArgumentsFromSchema {
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				return report("error", "tools/list: "+err.Error())
			}
			for _, tool := range tools.Tools {
				if tool.Name == st.MCPTool {
					raw, _ := json.Marshal(tool.InputSchema)
					var schema map[string]any
					_ = json.Unmarshal(raw, &schema)
					args = instanceOf(schema)
					break
				}
			}
		}
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

// instanceOf is a small value a JSON Schema accepts: an object with each
// required property, a string of the shortest length allowed, the
// smallest number allowed, the first enum value, the const. It reads the
// common keywords only (a scripted agent's stand-in for a model).
func instanceOf(schema map[string]any) any {
	if c, ok := schema["const"]; ok {
		return c
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	typ, _ := schema["type"].(string)
	if list, ok := schema["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	if typ == "" {
		if _, ok := schema["properties"]; ok {
			typ = "object"
		}
	}
	number := func(key string) float64 {
		f, _ := schema[key].(float64)
		return f
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			sub, _ := props[name].(map[string]any)
			out[name] = instanceOf(sub)
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		out := []any{}
		for i := 0; i < int(number("minItems")); i++ {
			out = append(out, instanceOf(items))
		}
		return out
	case "string":
		return strings.Repeat("x", int(number("minLength")))
	case "integer", "number":
		if _, ok := schema["exclusiveMinimum"]; ok {
			return math.Floor(number("exclusiveMinimum")) + 1
		}
		return number("minimum")
	case "boolean":
		return true
	case "null":
		return nil
	}
	return map[string]any{}
}
