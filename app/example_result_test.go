package app_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// ExampleSession_Turn_outputSchema runs a turn under an output schema
// (docs/behaviour.md#structured-results) on the reference agent, scripted
// to end its reply with a fenced JSON block, and decodes the validated
// result into a Go struct.
func ExampleSession_Turn_outputSchema() {
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{"acpdrive-agent"}
	settings.OutputSchema = json.RawMessage(`{
		"type": "object",
		"properties": {"done": {"type": "boolean"}, "branch": {"type": "string"}},
		"required": ["done"]
	}`)
	settings.OutputRetries = 1
	sess, err := app.Start(context.Background(), app.Options{
		Settings:  settings,
		Workspace: "/",
		Launcher:  inprocess.New("--script", "testdata/structured-result.json"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()

	res := sess.Turn(context.Background(), "#result Fix the bug and say which branch holds it.")
	if res.Result == nil {
		fmt.Println("no result:", res.ResultMissing)
		return
	}
	var result struct {
		Done   bool   `json:"done"`
		Branch string `json:"branch"`
	}
	if err := json.Unmarshal(res.Result, &result); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("done=%v branch=%s (from the %s)\n", result.Done, result.Branch, res.ResultSource)
	// Output:
	// done=true branch=fix-32 (from the reply)
}

// ExampleSession_TurnWithResult asks for the result of the last turn only
// (domain.ResultTurnsLast; docs/behaviour.md#structured-results): the
// earlier turns are sent as given and report no result; the last is sent
// with TurnWithResult.
func ExampleSession_TurnWithResult() {
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{"acpdrive-agent"}
	settings.OutputSchema = json.RawMessage(`{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`)
	settings.OutputSchemaTurns = domain.ResultTurnsLast
	sess, err := app.Start(context.Background(), app.Options{
		Settings:  settings,
		Workspace: "/",
		Launcher:  inprocess.New("--script", "testdata/structured-result.json"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()

	prompts := []string{"#prose Read the issue.", "#result Fix it and report."}
	for i, prompt := range prompts {
		var res domain.TurnResult
		if i == len(prompts)-1 {
			res = sess.TurnWithResult(context.Background(), prompt)
		} else {
			res = sess.Turn(context.Background(), prompt)
		}
		fmt.Printf("turn %d: result %s, missing %q\n", i+1, res.Result, res.ResultMissing)
	}
	// Output:
	// turn 1: result , missing ""
	// turn 2: result {"done":true,"branch":"fix-32"}, missing ""
}
