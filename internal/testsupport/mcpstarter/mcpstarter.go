// Package mcpstarter is a small fake ACP runtime for tests: unlike the
// reference agent, it starts the stdio MCP servers a session declares and
// completes MCP initialize with each (on the official MCP Go SDK's client),
// as real runtimes do. It answers initialize, session/new (and
// session/load, session/resume), session/prompt (end_turn, no update) and
// session/close; it ignores notifications. When its standard input ends it
// closes its MCP sessions (each server sees EOF), waits for them, and
// exits.
//
// Arguments: --lazy starts the servers at the first session/prompt
// instead of during session/new; --exit-after-new exits right after
// answering session/new; --log FILE appends one line per server
// started ("started NAME") and per server that failed ("failed NAME:
// error").
package mcpstarter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subcommand is the first argument a test binary recognises to run Main.
const Subcommand = "mcpstarter"

// MCPClientName is the name the fake runtime's MCP client gives in
// initialize; its version is MCPClientVersion.
const (
	MCPClientName    = "acpdrive-mcpstarter"
	MCPClientVersion = "1"
)

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

type server struct {
	Name    string   `json:"name"`
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
}

type runtime struct {
	lazy     bool
	exitNew  bool
	done     bool
	log      io.Writer
	out      *json.Encoder
	mu       sync.Mutex
	pending  []server
	sessions []*mcp.ClientSession
}

// Main runs the fake runtime on stdin and stdout and returns its exit
// status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	r := &runtime{log: io.Discard, out: json.NewEncoder(stdout)}
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--lazy":
			r.lazy = true
		case "--exit-after-new":
			r.exitNew = true
		case "--log":
			if i+1 >= len(args) {
				fmt.Fprintln(stderr, "mcpstarter: --log needs a file")
				return 2
			}
			i++
			f, err := os.OpenFile(args[i], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				fmt.Fprintln(stderr, "mcpstarter:", err)
				return 1
			}
			defer f.Close()
			r.log = f
		default:
			fmt.Fprintf(stderr, "mcpstarter: unknown argument %q\n", args[i])
			return 2
		}
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		r.handle(m)
		if r.done {
			break
		}
	}
	r.closeAll()
	return 0
}

func (r *runtime) reply(id json.RawMessage, result any) {
	_ = r.out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (r *runtime) handle(m message) {
	switch m.Method {
	case "initialize":
		r.reply(m.ID, map[string]any{
			"protocolVersion":   1,
			"agentCapabilities": map[string]any{"loadSession": false},
			"agentInfo":         map[string]any{"name": Subcommand, "version": "1"},
			"authMethods":       []any{},
		})
	case "session/new", "session/load", "session/resume":
		var p struct {
			MCPServers []server `json:"mcpServers"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if r.lazy {
			r.mu.Lock()
			r.pending = append(r.pending, p.MCPServers...)
			r.mu.Unlock()
		} else {
			r.start(p.MCPServers)
		}
		r.reply(m.ID, map[string]any{"sessionId": "mcpstarter-session"})
		r.done = r.exitNew
	case "session/prompt":
		r.mu.Lock()
		pending := r.pending
		r.pending = nil
		r.mu.Unlock()
		r.start(pending)
		r.reply(m.ID, map[string]any{"stopReason": "end_turn"})
	case "session/close":
		r.reply(m.ID, map[string]any{})
	default:
		_ = r.out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
	}
}

// start starts every stdio server and completes MCP initialize with it.
func (r *runtime) start(servers []server) {
	for _, s := range servers {
		if s.Type != "" && s.Type != "stdio" {
			continue
		}
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = os.Environ()
		for _, e := range s.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		cmd.Stderr = os.Stderr
		client := mcp.NewClient(&mcp.Implementation{Name: MCPClientName, Version: MCPClientVersion}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
		cancel()
		if err != nil {
			fmt.Fprintf(r.log, "failed %s: %v\n", s.Name, err)
			continue
		}
		fmt.Fprintf(r.log, "started %s\n", s.Name)
		r.mu.Lock()
		r.sessions = append(r.sessions, cs)
		r.mu.Unlock()
	}
}

// closeAll closes every MCP session: the server's stdin is closed and the
// process awaited.
func (r *runtime) closeAll() {
	r.mu.Lock()
	sessions := r.sessions
	r.sessions = nil
	r.mu.Unlock()
	for _, cs := range sessions {
		_ = cs.Close()
	}
}
