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

// declaredServer is one MCP server of session/new's mcpServers: a stdio
// server (command, args, env) or an HTTP one (type "http", url, headers).
type declaredServer struct {
	Type    string      `json:"type"`
	Name    string      `json:"name"`
	Command string      `json:"command"`
	Args    []string    `json:"args"`
	Env     []nameValue `json:"env"`
	URL     string      `json:"url"`
	Headers []nameValue `json:"headers"`
}

// nameValue is an environment variable or a header.
type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// mcpCall runs an mcpCall step and returns its report line: the server
// named st.MCPServer is started (stdio) or reached (HTTP, when this agent
// advertises mcpCapabilities.http), initialized, and its tool called.
func (a *agent) mcpCall(ctx context.Context, st *Step) string {
	report := func(status, text string) string { return "mcpCall " + st.MCPTool + " " + status + ": " + text }
	a.mu.Lock()
	servers := a.mcpServers
	a.mu.Unlock()
	var list []declaredServer
	_ = json.Unmarshal(servers, &list)
	for _, srv := range list {
		if srv.Name != st.MCPServer {
			continue
		}
		transport, release, ok := a.mcpTransport(srv)
		if !ok {
			continue
		}
		defer release()
		ctx, cancel := context.WithTimeout(ctx, mcpCallBound)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "acpdrive-reference-agent", Version: Version}, nil)
		cs, err := client.Connect(ctx, transport, nil)
		if err != nil {
			return report("error", "connect: "+err.Error())
		}
		defer cs.Close()
		return callTool(ctx, cs, st, report)
	}
	if a.takesHTTP() {
		return report("error", "no stdio or HTTP MCP server named "+st.MCPServer+" was declared")
	}
	return report("error", "no stdio MCP server named "+st.MCPServer+" was declared")
}

// mcpTransport is the MCP client transport of a declared server: its
// command for a stdio server, its URL and headers for an HTTP server when
// this agent advertised mcpCapabilities.http; ok is false for any other.
// release closes what the transport opened.
func (a *agent) mcpTransport(srv declaredServer) (t mcp.Transport, release func(), ok bool) {
	switch {
	case (srv.Type == "" || srv.Type == "stdio") && srv.Command != "":
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = os.Environ()
		for _, e := range srv.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		return &mcp.CommandTransport{Command: cmd}, func() {}, true
	case srv.Type == "http" && srv.URL != "" && a.takesHTTP():
		return httpTransport(srv.URL, srv.Headers)
	}
	return nil, nil, false
}

// callTool calls st's tool on cs (its arguments, or a value of the tool's
// input schema) and returns the report line.
func callTool(ctx context.Context, cs *mcp.ClientSession, st *Step, report func(status, text string) string) string {
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
