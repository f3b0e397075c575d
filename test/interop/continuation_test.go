//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Session continuation (docs/behaviour.md#continuation and
// #capabilities) against the real runtimes: a session saved by one acpdrive run
// is continued by a later one, through the route acpdrive's fixed order
// picks (session/load when loadSession is true, else session/resume).
//
// Every runtime here that advertises resume also advertises loadSession,
// so acpdrive never selects session/resume against them. The resume
// subtests therefore hide loadSession in the initialize response on its
// way to acpdrive (hideLoadSession, in the test's own launcher): the
// runtime itself is untouched and answers a real session/resume.
//
// A session/load of a session this test process created is held until the
// UTC minute of its creation has passed (up to a minute), whatever the
// runtime. The two tests that meet the hold (TestClaudeLoadHeld and
// TestGeminiLoadCreationMinute, the runtime the hold exists for) run in
// parallel after the others so the waits overlap; the other load tests
// continue a session another process saved (an `acpdrive run`), which is
// loaded at once.

const (
	// firstPrompt and firstReply make the first turn of a continued
	// session; the model call of the second turn must carry them.
	firstPrompt  = "remember the word apple"
	firstReply   = "The word is apple."
	secondPrompt = "which word did I ask you to remember?"
	secondReply  = "You asked me to remember apple."
	// holdLine is the Info line of acpdrive's UTC-minute hold.
	holdLine = "holding session/load until the UTC minute of the session's creation has passed"
)

// continuationScript scripts the two turns, one model call each.
func continuationScript(srv *fakes.Server) {
	srv.Script(
		fakes.TextReply(fakes.Usage{Input: 50, Output: 5}, "The word ", "is apple."),
		fakes.TextReply(fakes.Usage{Input: 80, Output: 7}, "You asked me ", "to remember apple."),
	)
}

// continuedTurn is the event sequence of the turn on a continued session
// (after whatever the replay produced).
var continuedTurn = textTurn(gapNotice(domain.CapTokenCounts), secondReply)

// resume sets Options.ResumeSessionID.
func resume(id string) optFn { return func(o *app.Options) { o.ResumeSessionID = id } }

// hideLoadSession returns a rewrite of the runtime's output that turns
// agentCapabilities.loadSession true into false in the initialize
// response, and a flag reporting whether it did.
func hideLoadSession() (func(string) string, *atomic.Bool) {
	var hid atomic.Bool
	return func(line string) string {
		var m struct {
			Result *struct {
				AgentCapabilities *struct {
					LoadSession *bool `json:"loadSession"`
				} `json:"agentCapabilities"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Result == nil || m.Result.AgentCapabilities == nil ||
			m.Result.AgentCapabilities.LoadSession == nil || !*m.Result.AgentCapabilities.LoadSession {
			return line
		}
		hid.Store(true)
		return strings.Replace(line, `"loadSession":true`, `"loadSession":false`, 1)
	}, &hid
}

// sessionState lists the session/update kinds that report session state
// rather than replay the conversation.
var sessionState = map[string]bool{
	"available_commands_update": true, "current_mode_update": true, "config_option_update": true,
	"session_info_update": true, "usage_update": true,
}

// replayed renders the replayed updates as "<kind>:<text>" for message
// chunks (text cut at 40 bytes) and "<kind>" for the others, leaving out
// session-state updates, and checks they all name the session id.
func replayed(t *testing.T, updates []wireMsg, id string) []string {
	t.Helper()
	var out []string
	for _, m := range updates {
		k := m.updateKind()
		if sessionState[k] {
			// Session state, not conversation history: runtimes send it
			// around a load or resume whenever they like (codex-acp's
			// available_commands_update races its load response).
			continue
		}
		assert.Equal(t, id, m.sessionID(), "a replayed update names the loaded session")
		var p struct {
			Update struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if k == "user_message_chunk" || k == "agent_message_chunk" {
			text := p.Update.Content.Text
			if len(text) > 40 {
				text = text[:40]
			}
			k += ":" + text
		}
		out = append(out, k)
	}
	return out
}

// hasChunk reports whether a rendered replay holds a message chunk.
func hasChunk(replay []string) bool {
	for _, k := range replay {
		if strings.HasPrefix(k, "user_message_chunk") || strings.HasPrefix(k, "agent_message_chunk") {
			return true
		}
	}
	return false
}

// controlAnswer is the runtime's answer to the negative control.
func controlAnswer(t *testing.T, r *rig) int {
	t.Helper()
	resp, ok := r.wire.responseTo(app.NegativeControlMethod)
	require.True(t, ok, "the negative control was not answered")
	require.NotNil(t, resp.Error, "the negative control was answered with a result: %s", resp.Result)
	return resp.Error.Code
}

// continuedLine is the CLI's debug log line of a confirmed continuation.
func continuedLine(route, id string) string {
	return `msg="agent session continued" component=acp_session route=` + route + " session_id=" + id
}

// saveWithCLI runs the first turn through `acpdrive run --json`, another
// OS process, and returns the session id it reports. The runtime
// advertises close, so that run ends the session with session/close.
func saveWithCLI(t *testing.T, r *rig) string {
	t.Helper()
	run := r.cli(firstPrompt)
	require.Equal(t, 0, run.Code, run.Stderr)
	require.Equal(t, []outcome{completed}, run.outcomes())
	require.NotNil(t, run.Run)
	id := run.Run.SessionID
	require.NotEmpty(t, id)
	assert.Contains(t, run.Stderr, `msg="session ended through the protocol" component=acp_session method=session/close session_id=`+id)
	return id
}

// saveWithLibrary runs the first turn on a library session and stops it
// right after, asserting the session/close teardown on the wire; it
// returns the id. Nothing waits for the runtime to store the turn: the
// teardown gives it the time (TestClaudeStopKeepsTranscriptTail).
func saveWithLibrary(t *testing.T, r *rig) string {
	t.Helper()
	sess := r.mustStart()
	require.Equal(t, "session/new", sess.Route())
	require.Equal(t, completed, outcomeOf(r.turn(sess, firstPrompt)))
	r.stop(sess)
	id := sess.ID()
	assert.Equal(t, []string{"initialize", "session/new", "session/prompt", "session/close"}, r.wire.methodsOut())
	closeAnswered(t, r, id)
	return id
}

// claudeTranscript is Claude Code's transcript of session id: JSON lines
// under $HOME/.claude/projects/<the workspace, path-encoded>/.
func claudeTranscript(r *rig, id string) string {
	paths, _ := filepath.Glob(filepath.Join(r.home, ".claude", "projects", "*", id+".jsonl"))
	var b strings.Builder
	for _, p := range paths {
		raw, _ := os.ReadFile(p)
		b.Write(raw)
	}
	return b.String()
}

// transcriptHasReply reports whether the transcript holds an assistant
// record with text.
func transcriptHasReply(transcript, text string) bool {
	for _, line := range strings.Split(transcript, "\n") {
		if strings.Contains(line, `"type":"assistant"`) && strings.Contains(line, text) {
			return true
		}
	}
	return false
}

// closeAnswered asserts that session/close named id and was answered {}.
func closeAnswered(t *testing.T, r *rig, id string) {
	t.Helper()
	for _, m := range r.wire.messages() {
		if m.Out && m.Method == "session/close" {
			assert.Equal(t, id, m.sessionID(), "session/close names the session")
		}
	}
	resp, ok := r.wire.responseTo("session/close")
	require.True(t, ok, "session/close was not answered")
	assert.JSONEq(t, `{}`, string(resp.Result))
}

// continuedCallCarriesHistory asserts that the model call of the
// continued turn sent the first turn's prompt and reply: the runtime
// really continued the conversation.
func continuedCallCarriesHistory(t *testing.T, srv *fakes.Server) {
	t.Helper()
	calls := srv.ModelCalls()
	require.Len(t, calls, 2, srv.Describe())
	last := calls[1]
	assert.True(t, last.BodyContains(secondPrompt), "the second prompt reaches the model")
	assert.True(t, last.BodyContains(firstPrompt), "the continued session's history reaches the model")
	assert.True(t, last.BodyContains(firstReply), "the continued session's history reaches the model")
	assert.Equal(t, 0, srv.Unscripted())
}

// replayThenTurn asserts an event sequence made of what the replay
// produced, then the continued turn; the replay must report want.
func replayThenTurn(t *testing.T, shape []string, want string) {
	t.Helper()
	split := slices.Index(shape, started)
	require.GreaterOrEqual(t, split, 0, "no turn: %q", shape)
	assertShape(t, continuedTurn, shape[split:])
	assert.Contains(t, shape[:split], want, "the replayed reply is reported before the turn")
}

// continueWithLibrary continues id through the library, runs the second
// turn and stops the session; it returns the session for inspection (the
// route, the replay and the teardown are the caller's to assert).
func continueWithLibrary(t *testing.T, r *rig, id string) *app.Session {
	t.Helper()
	sess := r.mustStart(resume(id))
	assert.Equal(t, id, sess.ID(), "the session runs under the saved id")
	assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, sess.Capabilities().Gaps(),
		"session continuation is not lowered")
	assert.Equal(t, completed, outcomeOf(r.turn(sess, secondPrompt)))
	assert.Equal(t, secondReply, sess.LastMessage().Text)
	r.stop(sess)
	return sess
}

// TestClaudeContinuation: the Claude agent adapter, the old pin and
// today's release, continues a saved session. Through session/resume
// with loadSession hidden (acpdrive's fixed order never picks resume
// here: loadSession is true), and through
// `acpdrive run --resume` (session/load, the route acpdrive picks; the CLI
// is another process, so no hold). The library's session/load is
// TestClaudeLoadHeld.
func TestClaudeContinuation(t *testing.T) {
	t.Parallel()
	for _, row := range []string{"claude", "claude-current"} {
		t.Run(row, func(t *testing.T) {
			t.Run("session/resume with loadSession hidden", func(t *testing.T) {
				r, srv := claudeRigOf(t, row)
				continuationScript(srv)
				id := saveWithLibrary(t, r)

				during, after := resumeHidden(t, r, id, "the adapter", "session/resume replays nothing")
				for _, k := range replayed(t, append(during, after...), id) {
					assert.NotContains(t, k, "message_chunk", "session/resume replays nothing")
				}
				assert.NotContains(t, r.logs.String(), holdLine, "no hold before session/resume")
				closeAnswered(t, r, id)
				continuedCallCarriesHistory(t, srv)
			})

			t.Run("cli --resume", func(t *testing.T) {
				r, srv := claudeRigOf(t, row)
				continuationScript(srv)
				id := saveWithLibrary(t, r)
				run := cliResume(t, r, id, []string{}, func(shape []string) { replayThenTurn(t, shape, "notification:"+firstReply) })
				assert.NotContains(t, run.Stderr, holdLine, "another process created the session: no hold")
				continuedCallCarriesHistory(t, srv)
			})
		})
	}
}

// TestClaudeLoadHeld: a library session saves a session (turn, stop with
// session/close); a second app.Start in this process continues it through
// session/load, the route acpdrive picks. This process created the
// session, so acpdrive holds the load until the UTC minute of its creation
// has passed, whatever the runtime (up to a minute): the test runs in
// parallel with TestGeminiLoadCreationMinute so the two waits overlap.
func TestClaudeLoadHeld(t *testing.T) {
	t.Parallel()
	// The save (start, turn, stop) takes a few seconds: start it with room
	// in the minute, so the load comes in the creation minute and is held
	// (a save that crossed the minute needs no hold). The room is generous:
	// the suite runs tests in parallel, so a start can take several times
	// its idle length, and the wait overlaps other tests.
	ensureRoom(t, 40*time.Second)
	r, srv := claudeRig(t)
	continuationScript(srv)
	id := saveWithLibrary(t, r)
	created := wireTime(t, r.wire, answerNaming(id))
	// What the load replays is what the runtime kept. Claude Code appends a
	// turn's records to its transcript a few milliseconds after the
	// prompt's response; on a loaded machine the adapter 0.23.1 can exit
	// (on its own, inside acpdrive's teardown grace) before they are
	// written, and the reply is lost from the runtime's own record (the
	// rate is TestClaudeStopKeepsTranscriptTail's to measure). The hold is
	// acpdrive's and is asserted either way; the replay of a lost reply is
	// not asked for.
	kept := transcriptHasReply(claudeTranscript(r, id), firstReply)
	if !kept {
		t.Logf("Claude Code's transcript lost the first turn's reply at the stop: the replay is checked for the prompt only")
	}

	r.phase("load")
	t0 := time.Now()
	sess := continueWithLibrary(t, r, id)
	t.Logf("start with the hold, turn and stop took %s", time.Since(t0).Round(time.Millisecond))
	assert.Equal(t, "session/load", sess.Route())
	loadAt := wireTime(t, r.wire, outCall("session/load"))
	assert.True(t, minuteOf(loadAt).After(minuteOf(created)),
		"session/load went out at %s, after the creation minute %s", loadAt.UTC(), minuteOf(created))
	assert.Contains(t, r.logs.String(), `msg="`+holdLine+`" component=acp_session session_id=`+id)
	// The replay comes before the response: the user messages (Claude
	// Code's own /model command and its output first), then the reply.
	during, after := continuedThrough(t, r, "session/load")
	replay := replayed(t, during, id)
	t.Logf("replayed before the session/load response: %q", replay)
	if kept {
		replayThenTurn(t, r.shape(), "notification:"+firstReply)
		require.GreaterOrEqual(t, len(replay), 2, "%q", replay)
		assert.Equal(t, []string{"user_message_chunk:" + firstPrompt, "agent_message_chunk:" + firstReply}, replay[len(replay)-2:])
	} else {
		shape := r.shape()
		split := slices.Index(shape, started)
		require.GreaterOrEqual(t, split, 0, "no turn: %q", shape)
		assertShape(t, continuedTurn, shape[split:])
		assert.Contains(t, replay, "user_message_chunk:"+firstPrompt)
	}
	for _, k := range replayed(t, after, id) {
		assert.NotContains(t, k, "message_chunk", "no message replayed after the response")
	}
	closeAnswered(t, r, id)
	if kept {
		continuedCallCarriesHistory(t, srv)
	}
}

// TestClaudeStopKeepsTranscriptTail: a session stopped right after a
// turn keeps that turn. Claude Code appends a turn's records to its
// transcript a few milliseconds after the prompt's response and does not
// write them on SIGTERM; acpdrive's teardown closes the runtime's stdin
// after session/close and gives it up to 1 s to exit on its own before
// SIGTERM (docs/behaviour.md#teardown), so the records are written. With
// SIGTERM right after session/close, about a third of such sessions lost
// the reply, and a later session/load replayed without it.
//
// Each of the sessions runs one turn and is stopped at once; then a fresh
// runtime process continues it through session/load, which must be
// confirmed (no fallback) and replay the turn's reply. All of them must
// keep it. They run in parallel, as many at a time as -parallel allows.
func TestClaudeStopKeepsTranscriptTail(t *testing.T) {
	t.Parallel()
	const sessions = 10
	t0 := time.Now()
	var kept atomic.Int32
	t.Run("sessions", func(t *testing.T) {
		for i := range sessions {
			t.Run(fmt.Sprintf("%02d", i+1), func(t *testing.T) {
				t.Parallel()
				if stopKeepsTail(t) {
					kept.Add(1)
				}
			})
		}
	})
	t.Logf("%d of %d sessions kept their last turn; %s in all", kept.Load(), sessions, time.Since(t0).Round(time.Millisecond))
	assert.Equal(t, int32(sessions), kept.Load(), "sessions that kept their last turn")
}

// stopKeepsTail runs one session of TestClaudeStopKeepsTranscriptTail and
// reports whether it kept its last turn (and failed t otherwise).
func stopKeepsTail(t *testing.T) bool {
	r, srv := claudeRig(t)
	continuationScript(srv)
	sess := r.mustStart()
	require.Equal(t, completed, outcomeOf(r.turn(sess, firstPrompt)))
	took := r.stop(sess)
	id := sess.ID()
	t.Logf("stop took %s", took.Round(time.Millisecond))
	assert.NotContains(t, r.logs.String(), "force-terminated", "the runtime exited on its own")
	inTranscript := transcriptHasReply(claudeTranscript(r, id), firstReply)
	assert.True(t, inTranscript, "the reply is in Claude Code's transcript once Stop returned")

	// A fresh runtime process loads the session. A new creation store
	// stands for another acpdrive process: nothing holds the load.
	r.phase("load")
	r.creations = app.NewMemoryCreations()
	loaded := r.mustStart(resume(id))
	assert.Equal(t, "session/load", loaded.Route())
	assert.Equal(t, id, loaded.ID())
	assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, loaded.Capabilities().Gaps(),
		"session continuation is not lowered")
	r.stop(loaded)
	during, after, ok := r.wire.around("session/load")
	require.True(t, ok, "session/load was not answered")
	replay := replayed(t, append(during, after...), id)
	inReplay := slices.Contains(replay, "agent_message_chunk:"+firstReply)
	assert.True(t, inReplay, "the replay carries the last reply: %q", replay)
	// The replayed reply is reported as a message (at the end of the
	// stream: no turn ran on the loaded session).
	assert.Contains(t, r.shape(), "notification:"+firstReply)
	assert.NotContains(t, r.shape(), started, "no turn ran on the loaded session")
	return inTranscript && inReplay && !t.Failed()
}

// TestCodexContinuation: codex-acp, the old pin and today's release,
// continues a saved session through session/load (the route acpdrive
// picks), replaying the user message and the agent's reply before its
// response; with loadSession hidden, through session/resume.
func TestCodexContinuation(t *testing.T) {
	t.Parallel()
	// The gaps a resumed CLI run reports: the old pin is measured from its
	// rollout only, today's release from its prompt results.
	resumeGaps := map[string][]string{"codex": {"token counts"}, "codex-current": {}}
	for _, row := range []string{"codex", "codex-current"} {
		t.Run(row, func(t *testing.T) {
			// The replay of the first turn: its agent reply becomes a message
			// event before the continued turn starts (docs/behaviour.md#messages).
			replayEvents := []string{"message_chunk*", "notification:" + firstReply}

			t.Run("session/load of a session a CLI run saved", func(t *testing.T) {
				r, srv := codexRigOf(t, row)
				continuationScript(srv)
				id := saveWithCLI(t, r)

				r.phase("load")
				sess := continueWithLibrary(t, r, id)
				assert.Equal(t, "session/load", sess.Route())
				assertShape(t, append(replayEvents, continuedTurn...), r.shape())
				during, after := continuedThrough(t, r, "session/load")
				assert.Equal(t, []string{"user_message_chunk:" + firstPrompt, "agent_message_chunk:" + firstReply},
					replayed(t, during, id), "the whole first turn is replayed before the response")
				assert.Empty(t, replayed(t, after, id))
				assert.NotContains(t, r.logs.String(), holdLine)
				closeAnswered(t, r, id)
				continuedCallCarriesHistory(t, srv)
			})

			t.Run("session/resume with loadSession hidden", func(t *testing.T) {
				r, srv := codexRigOf(t, row)
				continuationScript(srv)
				id := saveWithLibrary(t, r)

				during, after := resumeHidden(t, r, id, "codex-acp")
				assert.Empty(t, replayed(t, append(during, after...), id), "session/resume replays nothing")
				closeAnswered(t, r, id)
				continuedCallCarriesHistory(t, srv)
			})

			t.Run("cli --resume", func(t *testing.T) {
				r, srv := codexRigOf(t, row)
				continuationScript(srv)
				id := saveWithCLI(t, r)
				cliResume(t, r, id, resumeGaps[row], func(shape []string) { assertShape(t, append(replayEvents, continuedTurn...), shape) })
				continuedCallCarriesHistory(t, srv)
			})
		})
	}
}

// minuteOf is the UTC minute t falls in.
func minuteOf(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }

// roomInMinute is what remains of the current UTC minute.
func roomInMinute() time.Duration {
	now := time.Now()
	return minuteOf(now).Add(time.Minute).Sub(now)
}

// ensureRoom waits for the next UTC minute when less than need remains of
// the current one (so it waits less than need).
func ensureRoom(t *testing.T, need time.Duration) {
	t.Helper()
	if room := roomInMinute(); room < need {
		t.Logf("%.1f s left in this UTC minute; waiting for the next one", room.Seconds())
		time.Sleep(room + 100*time.Millisecond)
	}
}

// wireTime is when the first message the predicate accepts crossed the
// wire.
func wireTime(t *testing.T, w *wireLog, match func(wireMsg) bool) time.Time {
	t.Helper()
	for _, l := range w.all() {
		var m wireMsg
		if json.Unmarshal([]byte(l.Line), &m) != nil {
			continue
		}
		m.Out = l.Out
		if match(m) {
			return l.At
		}
	}
	t.Fatalf("no such message on the wire")
	return time.Time{}
}

// answerNaming matches the runtime's answer that names session id (the
// session/new that created it).
func answerNaming(id string) func(wireMsg) bool {
	return func(m wireMsg) bool { return !m.Out && m.Method == "" && strings.Contains(string(m.Result), id) }
}

// outCall matches acpdrive's calls of method.
func outCall(method string) func(wireMsg) bool {
	return func(m wireMsg) bool { return m.Out && m.Method == method }
}

// TestGeminiLoadCreationMinute: Gemini CLI stores a session under a file
// name of minute resolution, and a session/load in the UTC minute of the
// session's creation fails and wipes it for good. The subtests share one
// timeline so that the minute waits overlap (about a minute in all):
//
//  1. the defect, across OS processes (acpdrive has no memory of the
//     creation, so nothing holds the load): `acpdrive run` saves a session,
//     a second `acpdrive run --resume` loads it in the same minute, the
//     load fails, acpdrive falls back to session/new and lowers session
//     continuation;
//  2. within one process, acpdrive's hold makes the same-minute load
//     succeed: the library creates a session, then a second app.Start
//     continues it; session/load waits until the minute has passed;
//  3. the session of 1, loaded in a later minute, still fails: it was
//     wiped.
//
// It runs in parallel with TestClaudeLoadHeld, after the sequential tests.
func TestGeminiLoadCreationMinute(t *testing.T) {
	t.Parallel() // with TestClaudeLoadHeld: their minute waits overlap
	// Both runs of 1 take a few seconds; start them with room to spare, as
	// for a loaded machine (the suite runs tests in parallel) (waits: at
	// most 40 s here, at most 30 s before 2, then the hold of 2, under a
	// minute; they overlap other tests).
	ensureRoom(t, 40*time.Second)

	// The rig of 1 and 3 (same HOME, workspace and fake server), made on
	// the parent test so it outlives subtest 1.
	r1, srv1 := geminiRig(t, true)
	srv1.Script(
		fakes.TextReply(fakes.Usage{Input: 50, Output: 5}, "The word ", "is apple."),
		fakes.TextReply(fakes.Usage{Input: 60, Output: 5}, "I have no ", "word to recall."),
		fakes.TextReply(fakes.Usage{Input: 60, Output: 5}, "Still no ", "word to recall."),
	)
	var wiped string          // the session 1 saved
	var wipedMinute time.Time // the UTC minute it was created in
	// freshTurn is a turn on the session/new acpdrive fell back to.
	freshTurn := func(reply string) []string {
		return textTurn(gapNotice(domain.CapTokenCounts, domain.CapSessionContinuation), reply)
	}

	t.Run("across processes a same-minute load fails and falls back", func(t *testing.T) {
		defer r1.bind(t)()
		t0 := time.Now()
		a := r1.cli(firstPrompt)
		require.Equal(t, 0, a.Code, a.Stderr)
		require.NotNil(t, a.Run)
		id := a.Run.SessionID
		require.NotEmpty(t, id)

		b := r1.cliWith([]string{"--resume", id}, secondPrompt)
		t1 := time.Now()
		require.Equal(t, minuteOf(t0), minuteOf(t1), "both runs landed in one UTC minute (%s to %s)", t0.UTC(), t1.UTC())
		wiped, wipedMinute = id, minuteOf(t0)

		require.Equal(t, 0, b.Code, b.Stderr)
		require.NotNil(t, b.Run)
		assert.NotEqual(t, id, b.Run.SessionID, "the run fell back to a new session")
		assert.NotEmpty(t, b.Run.SessionID)
		assert.Equal(t, []string{"token counts", "session continuation"}, b.Run.CapabilityGaps)
		assertShape(t, freshTurn("I have no word to recall."), b.shape(r1))
		assert.Equal(t, []outcome{completed}, b.outcomes())
		// The runtime's error (its message data, echoed on its stderr), the
		// comparison with the negative control, the fallback; no hold.
		assert.Contains(t, b.Stderr, "No previous sessions found for this project.")
		assert.Contains(t, b.Stderr, `msg="session continuation call failed" component=acp_session route=session/load session_id=`+id+
			` call_code=-32603 control_code=-32601 verdict=broken`)
		assert.Contains(t, b.Stderr, `msg="session continuation not confirmed; falling back to session/new"`)
		assert.NotContains(t, b.Stderr, holdLine, "another process created the session: no hold")
		calls := srv1.ModelCalls()
		require.Len(t, calls, 2, srv1.Describe())
		assert.False(t, calls[1].BodyContains(firstPrompt), "the fallback session has no history")
	})

	t.Run("in one process the hold makes a same-minute load succeed", func(t *testing.T) {
		// Creation and the load's start must share a minute for the hold
		// to show; they are about two seconds apart (several times that on
		// a loaded machine).
		ensureRoom(t, 30*time.Second)
		r, srv := geminiRig(t, true)
		continuationScript(srv)
		a := r.mustStart()
		require.Equal(t, completed, outcomeOf(r.turn(a, firstPrompt)))
		r.stop(a)
		id := a.ID()
		created := wireTime(t, r.wire, answerNaming(id))
		assert.Equal(t, []string{"initialize", "session/new", "session/prompt"}, r.wire.methodsOut(), "no close advertised")

		r.phase("load")
		b := r.mustStart(resume(id))
		assert.Equal(t, "session/load", b.Route())
		assert.Equal(t, id, b.ID())
		assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, b.Capabilities().Gaps(), "session continuation is not lowered")
		assert.Contains(t, r.logs.String(), `msg="`+holdLine+`" component=acp_session session_id=`+id)
		loadAt := wireTime(t, r.wire, outCall("session/load"))
		assert.True(t, minuteOf(loadAt).After(minuteOf(created)),
			"session/load went out at %s, after the creation minute %s", loadAt.UTC(), minuteOf(created))
		assert.Equal(t, -32601, controlAnswer(t, r))
		assert.Contains(t, r.logs.String(), continuedLine("session/load", id))

		assert.Equal(t, completed, outcomeOf(r.turn(b, secondPrompt)))
		r.stop(b)
		assert.Equal(t, []string{"initialize", app.NegativeControlMethod, "session/load", "session/prompt"}, r.wire.methodsOut())
		// The replay: Gemini CLI sends its own session-context message
		// before its response and the rest about a millisecond after it.
		// acpdrive confirms the load on that first chunk and waits for the
		// replay to go quiet before Start returns, so the rest of the
		// replay is reported before the first turn starts.
		during, after, ok := r.wire.around("session/load")
		require.True(t, ok, "session/load was not answered")
		t.Logf("replay before the response: %q; after it, before the prompt went out: %q",
			replayed(t, during, id), replayed(t, after, id))
		assert.True(t, hasChunk(replayed(t, during, id)), "a message chunk before the response confirms the load")
		var all []wireMsg
		for _, m := range r.wire.messages() {
			if !m.Out && m.Method == "session/update" {
				all = append(all, m)
			}
		}
		assert.Contains(t, replayed(t, all, id), "agent_message_chunk:"+firstReply, "the reply is replayed")
		shape := r.shape()
		assert.NotContains(t, shape, "notification:"+firstReply+secondReply,
			"the replayed reply must not merge into the turn's message")
		replayThenTurn(t, shape, "notification:"+firstReply)
		assert.True(t, strings.HasSuffix(b.LastMessage().Text, secondReply), "%q", b.LastMessage().Text)
		continuedCallCarriesHistory(t, srv)
	})

	t.Run("the wiped session fails to load in a later minute too", func(t *testing.T) {
		defer r1.bind(t)()
		if wiped == "" {
			t.Skip("needs the session the first subtest saved")
		}
		if room := roomInMinute(); minuteOf(time.Now()).Equal(wipedMinute) {
			t.Logf("still in the creation minute; waiting %.1f s", room.Seconds())
			time.Sleep(room + 100*time.Millisecond)
		}
		r1.phase("later load")
		sess := r1.mustStart(resume(wiped))
		loadAt := wireTime(t, r1.wire, outCall("session/load"))
		assert.True(t, minuteOf(loadAt).After(wipedMinute), "session/load at %s, creation minute %s", loadAt.UTC(), wipedMinute)
		assert.Equal(t, "session/new", sess.Route())
		assert.NotEqual(t, wiped, sess.ID())
		assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts, domain.CapSessionContinuation}, sess.Capabilities().Gaps())
		resp, ok := r1.wire.responseTo("session/load")
		require.True(t, ok)
		require.NotNil(t, resp.Error, "the load of the wiped session succeeded: %s", resp.Result)
		assert.Equal(t, -32603, resp.Error.Code)
		assert.Equal(t, "Internal error", resp.Error.Message)
		// Now other sessions exist (the fallbacks'), so Gemini CLI no longer
		// says there are none: it does not find this one.
		var data struct {
			Details string `json:"details"`
		}
		require.NoError(t, json.Unmarshal(resp.Error.Data, &data))
		assert.True(t, strings.HasPrefix(data.Details, `Invalid session identifier "`+wiped+`".`), "%s", data.Details)
		assert.Equal(t, []string{"initialize", app.NegativeControlMethod, "session/load", "session/new"}, r1.wire.methodsOut())

		assert.Equal(t, completed, outcomeOf(r1.turn(sess, secondPrompt)))
		r1.stop(sess)
		assertShape(t, freshTurn("Still no word to recall."), r1.shape())
	})
}
