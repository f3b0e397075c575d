package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
)

// heldTwoTurns plays what a holder replays of a session whose second turn
// is under way: the session/new answer, the first turn's update and
// answer, then the second turn's.
const heldTwoTurns = `{"startup":[
{"step":"raw","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"s-1\"}}"},
{"step":"text","text":"first","session":"s-1","messageId":"m-1"},
{"step":"raw","line":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}"},
{"step":"text","text":"second","session":"s-1","messageId":"m-2"},
{"step":"raw","line":"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}"}]}`

// ExampleSkipTurns follows the second turn of a held session: the
// messages of the first are left out, so Attach reads the second as the
// turn under way (docs/behaviour.md#batch-journal).
func ExampleSkipTurns() {
	dir, err := os.MkdirTemp("", "attach")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "replay.json")
	if err := os.WriteFile(script, []byte(heldTwoTurns), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	run, err := app.Attach(context.Background(), app.AttachOptions{
		Launcher:  app.SkipTurns(inprocess.New("--script", script), 1),
		Workspace: dir,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := run.Turns[len(run.Turns)-1]
	fmt.Println(len(run.Turns), res.Outcome, res.Reply)
	// Output: 1 turn_completed second
}
