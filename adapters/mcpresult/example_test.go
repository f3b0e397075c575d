package mcpresult_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/ports"
)

// ExampleNew_http arms the result tool served from this process over
// HTTP, as app.Start does for a runtime that advertises
// mcpCapabilities.http (docs/behaviour.md#structured-results), and shows
// the server it declares; a runtime without HTTP is not served.
func ExampleNew_http() {
	results := mcpresult.New(mcpresult.Options{HTTP: true})
	schema := json.RawMessage(`{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`)

	armed, err := results.Arm(context.Background(), schema, ports.MCPTransports{HTTP: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = armed.Release() }()
	srv := armed.Server()
	fmt.Println(srv.Name, srv.Transport, strings.HasPrefix(srv.URL, "http://127.0.0.1:"), srv.Headers[0].Name)

	_, err = results.Arm(context.Background(), schema, ports.MCPTransports{})
	fmt.Println(err)
	// Output:
	// acpdrive-result http true Authorization
	// the result server offers no MCP transport the runtime takes
}
