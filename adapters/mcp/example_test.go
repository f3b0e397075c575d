package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/ports"
)

// The worker merges the operator's file with its own tools entry and
// writes the generated file; session start renders it for the runtime.
func Example() {
	dir, err := os.MkdirTemp("", "mcp-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	operator := filepath.Join(dir, "mcp-servers.json")
	if err := os.WriteFile(operator, []byte(`{"mcpServers": {
		"search": {"type": "http", "url": "https://search.example/mcp"},
		"fs": {"command": "/usr/bin/mcp-fs", "args": ["--root", "."]}
	}}`), 0o600); err != nil {
		panic(err)
	}

	doc, err := mcp.Merge(operator, "", mcp.Server{
		Command: "/usr/local/bin/tools",
		Env:     []mcp.Pair{{Name: "ISSUE", Value: "PROJ-7"}},
	})
	if err != nil {
		panic(err)
	}
	generated := filepath.Join(dir, ".sortie", "mcp.json")
	if err := mcp.WriteFile(generated, doc); err != nil {
		panic(err)
	}

	// The handshake advertised mcpCapabilities {http: false, sse: false}.
	servers, withheld, err := mcp.New(mcp.Options{}).Render(context.Background(), generated, ports.MCPCapabilities{})
	if err != nil {
		panic(err)
	}
	for _, s := range servers {
		fmt.Println(string(s))
	}
	fmt.Println("withheld:", withheld)

	_, err = mcp.Merge(generated, "", mcp.Server{Command: "/usr/local/bin/tools"})
	fmt.Println(err != nil)
	// Output:
	// {"name":"fs","command":"/usr/bin/mcp-fs","args":["--root","."],"env":[]}
	// {"name":"sortie-tools","command":"/usr/local/bin/tools","args":[],"env":[{"name":"ISSUE","value":"PROJ-7"}]}
	// withheld: true
	// true
}
