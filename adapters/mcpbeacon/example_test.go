package mcpbeacon_test

import (
	"context"
	"fmt"
	"os"

	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
)

// A program embedding acpdrive re-executes itself as the beacon: its main
// runs mcpbeacon.Main when started with the subcommand it put in
// Options.Command, and passes the Beacon as app.Options.ToolServerBeacon:
//
//	func main() {
//		if len(os.Args) > 1 && os.Args[1] == mcpbeacon.SubcommandName {
//			os.Exit(mcpbeacon.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
//		}
//		exe, _ := os.Executable()
//		opts := app.Options{ /* … */ ToolServerBeacon: mcpbeacon.New(mcpbeacon.Options{Command: []string{exe, mcpbeacon.SubcommandName}})}
//		opts.Settings.ConfirmToolServers = true
//		// app.Start(ctx, opts) …
//	}
//
// Each session arms a beacon of its own; this is what it declares.
func Example() {
	exe, err := os.Executable()
	if err != nil {
		fmt.Println(err)
		return
	}
	b := mcpbeacon.New(mcpbeacon.Options{Command: []string{exe, mcpbeacon.SubcommandName}})
	armed, err := b.Arm(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer armed.Release()
	srv := armed.Server()
	fmt.Println(srv.Name, srv.Transport, srv.Args)
	for _, e := range srv.Env {
		fmt.Println(e.Name)
	}
	// Output:
	// acpdrive-beacon stdio [mcp-beacon]
	// ACPDRIVE_BEACON_SOCKET
	// ACPDRIVE_BEACON_TOKEN
}
