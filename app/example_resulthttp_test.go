package app_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// ExampleSession_Turn_resultToolOverHTTP gets the structured result
// through the result tool with no binary to re-execute
// (docs/behaviour.md#structured-results): the ResultServer serves
// submit_result from this process over HTTP on 127.0.0.1, and the
// reference agent, which advertises mcpCapabilities.http in this
// scenario, calls it.
func ExampleSession_Turn_resultToolOverHTTP() {
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{"acpdrive-agent"}
	settings.OutputSchema = json.RawMessage(`{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`)
	sess, err := app.Start(context.Background(), app.Options{
		Settings:     settings,
		Workspace:    "/",
		Launcher:     inprocess.New("--scenario", "result-tool-http"),
		ResultServer: mcpresult.New(mcpresult.Options{HTTP: true}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()

	res := sess.Turn(context.Background(), "Fix the bug and report.")
	fmt.Printf("result %s (from the %s)\n", res.Result, res.ResultSource)
	// Output:
	// result {"done":true} (from the tool)
}
