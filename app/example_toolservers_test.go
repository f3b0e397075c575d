package app_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// ExampleStart_confirmToolServers asks for the tool-server confirmation on
// the reference agent, which takes no MCP servers: the beacon it is given
// is never started, so "tool servers" is lowered and the first turn says
// why. The beacon command re-executes this program (see the mcpbeacon
// package example for the main that serves it).
func ExampleStart_confirmToolServers() {
	exe, err := os.Executable()
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"acpdrive-agent"}
	cfg.ConfirmToolServers = true
	cfg.ConfirmToolServersTimeout = 200 * time.Millisecond
	sess, err := app.Start(context.Background(), app.Options{
		Settings:         cfg,
		Workspace:        "/",
		Launcher:         inprocess.New("--scenario", "echo"),
		Clock:            sysclock.Clock{},
		ToolServerBeacon: mcpbeacon.New(mcpbeacon.Options{Command: []string{exe, mcpbeacon.SubcommandName}}),
		OnEvent: func(ev domain.Event) {
			if ev.Type == domain.EventNotification && ev.Message != "hello" && ev.Message != "" {
				fmt.Println("notice:", ev.Message)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()
	caps := sess.Capabilities()
	fmt.Println("tool servers:", caps.State(domain.CapToolServers), "confirmed:", sess.AgentInfo().ToolServers.Confirmed)
	sess.Turn(context.Background(), "hello")
	// Output:
	// tool servers: gap confirmed: false
	// notice: this session started with a declared capability gap in: tool servers, token counts, session continuation
	// notice: tool servers not confirmed: the runtime did not start the stdio MCP server "acpdrive-beacon" that acpdrive declared beside the session's own and complete its MCP initialize within 200ms of the session's creation, so the declared MCP servers are probably not running either
}
