package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/domain"
)

// The worker merges the operator's file with its own tools entry and
// writes the generated file; session start loads it. Load returns every
// enabled server: which of them a runtime can take is decided later, from
// the handshake.
func Example() {
	dir, err := os.MkdirTemp("", "mcp-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	operator := filepath.Join(dir, "mcp-servers.json")
	if err := os.WriteFile(operator, []byte(`{"mcpServers": {
		"search": {"type": "http", "url": "https://search.example/mcp"},
		"fs": {"command": "/usr/bin/mcp-fs", "args": ["--root", "."]},
		"parked": {"command": "/usr/bin/parked", "enabled": false}
	}}`), 0o600); err != nil {
		panic(err)
	}

	doc, err := mcp.Merge(operator, mcp.DefaultReservedName, domain.MCPServer{
		Command: "/usr/local/bin/tools",
		Env:     []domain.NameValue{{Name: "ISSUE", Value: "PROJ-7"}},
	})
	if err != nil {
		panic(err)
	}
	generated := filepath.Join(dir, ".sortie", "mcp.json")
	if err := mcp.WriteFile(generated, doc); err != nil {
		panic(err)
	}

	servers, err := mcp.New(mcp.Options{}).Load(context.Background(), generated)
	if err != nil {
		panic(err)
	}
	for _, s := range servers {
		fmt.Println(s.Name, s.Transport, s.Deliverable(false, false))
	}

	// The generated file already declares the reserved name, so it cannot
	// serve as an operator file.
	_, err = mcp.Merge(generated, "", domain.MCPServer{Command: "/usr/local/bin/tools"})
	fmt.Println(errors.Is(err, mcp.ErrReservedName))
	// Output:
	// search http false
	// fs stdio true
	// sortie-tools stdio true
	// true
}

func ExampleSource_Load() {
	dir, err := os.MkdirTemp("", "mcp-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {
		"fs":  {"command": "/usr/bin/mcp-fs", "env": {"LOG": "1"}},
		"api": {"url": "https://api.example/mcp", "headers": {"Authorization": "Bearer t"}}
	}}`), 0o600); err != nil {
		panic(err)
	}

	src := mcp.New(mcp.Options{})
	servers, err := src.Load(context.Background(), path)
	if err != nil {
		panic(err)
	}
	for _, s := range servers {
		fmt.Printf("%s %s command=%q url=%q env=%v headers=%v\n", s.Name, s.Transport, s.Command, s.URL, s.Env, s.Headers)
	}

	if err := os.WriteFile(path, []byte(`{"mcpServers": {"fs": {"command": ["npx"]}}}`), 0o600); err != nil {
		panic(err)
	}
	_, err = src.Load(context.Background(), path)
	var ae *domain.AgentError
	fmt.Println(errors.As(err, &ae), ae.Kind, errors.Is(err, mcp.ErrMalformed))
	// Output:
	// fs stdio command="/usr/bin/mcp-fs" url="" env=[{LOG 1}] headers=[]
	// api http command="" url="https://api.example/mcp" env=[] headers=[{Authorization Bearer t}]
	// true response_error true
}
