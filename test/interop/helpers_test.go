//go:build interop

package interop

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// Steps the runtime tests share: a turn through the library or the CLI
// and what is asserted of it, what initialize advertised, the refused
// tool turn, and the continuation routes.

// libraryTurn runs one turn of prompt on sess, stops the session, and
// asserts the turn's outcome and the rig's event sequence. It returns the
// turn's result and how long the stop took.
func libraryTurn(t *testing.T, r *rig, sess *app.Session, prompt string, wantOutcome outcome, want []string) (domain.TurnResult, time.Duration) {
	t.Helper()
	res := r.turn(sess, prompt)
	took := r.stop(sess)
	assert.Equal(t, wantOutcome, outcomeOf(res))
	assertShape(t, want, r.shape())
	return res, took
}

// cliCompleted runs `acpdrive run --json` with args (flags, then prompts)
// and asserts that it exited 0 with the event sequence want and a single
// completed turn.
func cliCompleted(t *testing.T, r *rig, want []string, args ...string) cliRun {
	t.Helper()
	run := r.cli(args...)
	require.Equal(t, 0, run.Code, run.Stderr)
	assertShape(t, want, run.shape(r))
	assert.Equal(t, []outcome{completed}, run.outcomes())
	return run
}

// cliFailed runs `acpdrive run --json` with args and asserts that it
// exited 1 after its first turn failed with wantOutcome and the event
// sequence want, reporting whether the failure is retryable (the caller
// asserts which: run.Results[0].Retryable).
func cliFailed(t *testing.T, r *rig, wantOutcome outcome, want []string, args ...string) cliRun {
	t.Helper()
	run := r.cli(args...)
	assert.Equal(t, 1, run.Code, run.Stderr)
	assertShape(t, want, run.shape(r))
	assert.Equal(t, []outcome{wantOutcome}, run.outcomes())
	require.Len(t, run.Results, 1)
	require.NotNil(t, run.Results[0].Retryable)
	return run
}

// assertGaps asserts the capability gaps a CLI run reported.
func assertGaps(t *testing.T, run cliRun, gaps ...string) {
	t.Helper()
	require.NotNil(t, run.Run)
	assert.Equal(t, gaps, run.Run.CapabilityGaps)
}

// agentIs logs what initialize advertised and the capability record, and
// asserts the agent's name and version and that it advertised
// loadSession; it returns the initialize response.
func agentIs(t *testing.T, sess *app.Session, name, version string) domain.AgentInfo {
	t.Helper()
	t.Log(capsLine(sess))
	info := sess.AgentInfo()
	require.True(t, info.Reported, "no agentInfo")
	assert.Equal(t, name, info.Name)
	assert.Equal(t, version, info.Version)
	assert.True(t, info.Advertised.LoadSession)
	return info
}

// authMethodIDs lists the ids of the authentication methods advertised.
func authMethodIDs(info domain.AgentInfo) []string { return info.Advertised.AuthMethods }

// textTurn is the event sequence of a session's first turn: the gap
// notice gaps, then the agent's reply in text.
func textTurn(gaps, reply string) []string {
	return []string{
		started,
		gaps,
		"message_chunk*",
		"notification:" + reply,
		"turn_completed",
	}
}

// refusedToolTurn is the event sequence of a turn whose one tool call
// (execute) was refused: the model's text, the refusal, the failed call,
// the model's answer in text.
func refusedToolTurn(gaps string) []string {
	return []string{
		started,
		gaps,
		"message_chunk*",
		"notification:Let me write the file.",
		refused,
		"tool_result:execute:error",
		"message_chunk*",
		"notification:I did not write the file.",
		"turn_completed",
	}
}

// assertNotWritten asserts that the refused command, which writes
// out.txt, did not run.
func assertNotWritten(t *testing.T, r *rig) {
	t.Helper()
	_, err := os.Stat(filepath.Join(r.workspace, "out.txt"))
	assert.True(t, errors.Is(err, os.ErrNotExist), "the refused command did not run")
}

// permissionOptions decodes a session/request_permission request: its
// options as "<optionId>=<kind>" and the id of the tool call it is for.
func permissionOptions(t *testing.T, perm wireMsg) (opts []string, toolCallID string) {
	t.Helper()
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
		ToolCall struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"`
	}
	require.NoError(t, json.Unmarshal(perm.Params, &p))
	for _, o := range p.Options {
		opts = append(opts, o.OptionID+"="+o.Kind)
	}
	return opts, p.ToolCall.ToolCallID
}

// continuedThrough asserts that the negative control was answered -32601
// and the calls acpdrive made on a session continued through route (then
// one turn and session/close); it returns the session/update
// notifications sent while the route's call was open and after it.
func continuedThrough(t *testing.T, r *rig, route string) (during, after []wireMsg) {
	t.Helper()
	assert.Equal(t, -32601, controlAnswer(t, r))
	assert.Equal(t, []string{"initialize", app.NegativeControlMethod, route, "session/prompt", "session/close"},
		r.wire.methodsOut())
	during, after, ok := r.wire.around(route)
	require.True(t, ok, route+" was not answered")
	return during, after
}

// resumeHidden continues id through session/resume with loadSession
// hidden from acpdrive (who names the runtime that advertised it), in a
// new phase of the rig, and asserts the route, the event sequence (a
// continued turn only; msgAndArgs for its failure) and the calls made; it
// returns what continuedThrough returns.
func resumeHidden(t *testing.T, r *rig, id, who string, msgAndArgs ...any) (during, after []wireMsg) {
	t.Helper()
	r.phase("resume")
	rewrite, hid := hideLoadSession()
	r.rewrite = rewrite
	sess := continueWithLibrary(t, r, id)
	require.True(t, hid.Load(), who+" advertised loadSession true; the test hid it")
	assert.Equal(t, "session/resume", sess.Route())
	assertShape(t, continuedTurn, r.shape(), msgAndArgs...)
	return continuedThrough(t, r, "session/resume")
}

// cliResume runs the second turn through `acpdrive run --resume id`,
// requires exit 0, hands the run's event sequence to checkShape, and
// asserts that the run continued id through session/load with the gaps
// gaps (none for a runtime whose prompt results carry usage) and ended it
// with session/close.
func cliResume(t *testing.T, r *rig, id string, gaps []string, checkShape func(shape []string)) cliRun {
	t.Helper()
	run := r.cliWith([]string{"--resume", id}, secondPrompt)
	require.Equal(t, 0, run.Code, run.Stderr)
	checkShape(run.shape(r))
	require.NotNil(t, run.Run)
	assert.Equal(t, id, run.Run.SessionID)
	assert.Equal(t, gaps, run.Run.CapabilityGaps)
	assert.Contains(t, run.Stderr, continuedLine("session/load", id))
	assert.Contains(t, run.Stderr, `method=session/close session_id=`+id)
	return run
}
