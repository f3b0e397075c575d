package app_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// heldReplay plays what a holder replays to an attach: the session/new
// answer, the turn's updates and the session/prompt answer (whose id is
// the first client's), with no request from the attach.
const heldReplay = `{"startup":[
{"step":"raw","line":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"sessionId\":\"s-1\"}}"},
{"step":"text","text":"held ","session":"s-1","messageId":"m-1"},
{"step":"text","text":"reply","session":"s-1","messageId":"m-1"},
{"step":"raw","line":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}"}]}`

// ExampleAttach follows a held session's running turn to its end without
// a handshake or a prompt (docs/behaviour.md#held-sessions). Here the
// reference agent, served in this process, plays the replay; acpdrive
// attach passes a launcher that resumes the held connection
// (netdial.Options.Resume).
func ExampleAttach() {
	dir, err := os.MkdirTemp("", "attach")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "replay.json")
	if err := os.WriteFile(script, []byte(heldReplay), 0o600); err != nil {
		fmt.Println(err)
		return
	}
	run, err := app.Attach(context.Background(), app.AttachOptions{
		Launcher:  inprocess.New("--script", script),
		Workspace: dir,
		OnEvent: func(ev domain.Event) {
			fmt.Printf("%s %q\n", ev.Type, ev.Message)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := run.Turns[len(run.Turns)-1]
	fmt.Println("outcome:", res.Outcome, res.StopReason, "reply:", res.Reply)
	// Output:
	// session_started "session started"
	// message_chunk "held "
	// message_chunk "reply"
	// notification "held reply"
	// turn_completed ""
	// outcome: turn_completed end_turn reply: held reply
}

// ExampleCheckLaunch checks a launch without starting anything: a
// workspace that does not exist is refused as a start refuses it.
func ExampleCheckLaunch() {
	l := inprocess.New("--scenario", "echo")
	fmt.Println(app.CheckLaunch(l, []string{"acpdrive-agent"}, "/"))
	err := app.CheckLaunch(l, []string{"acpdrive-agent"}, "/no/such/workspace")
	var ae *domain.AgentError
	fmt.Println(errors.As(err, &ae) && ae.Kind == domain.KindInvalidWorkspaceCWD)
	// Output:
	// <nil>
	// true
}
