//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Steps the tests of the runtimes driven against the fake Chat
// Completions server share (Qwen Code, opencode, Copilot CLI; each runs
// offline, in a network namespace of its own): two turns on one process,
// cancel mid-turn, `--resume` across processes, probe against the raw
// initialize answer.

// twoTurnShape is the event sequence of the two continuation turns on one
// session (the gap notice once, in the first).
func twoTurnShape(gaps string) []string {
	return append(textTurn(gaps, firstReply), started, keepAlive, "notification:"+secondReply, "turn_completed")
}

// twoTurnsLibrary runs the two continuation turns on one library session
// and stops it; the second model call must carry the first turn.
func twoTurnsLibrary(t *testing.T, r *rig, srv *fakes.Server, gaps string) {
	t.Helper()
	continuationScript(srv)
	sess := r.mustStart()
	require.Equal(t, completed, outcomeOf(r.turn(sess, firstPrompt)))
	assert.Equal(t, firstReply, sess.LastMessage().Text)
	require.Equal(t, completed, outcomeOf(r.turn(sess, secondPrompt)))
	assert.Equal(t, secondReply, sess.LastMessage().Text)
	r.stop(sess)
	assertShape(t, twoTurnShape(gaps), r.shape())
	continuedCallCarriesHistory(t, srv)
	prompts := 0
	for _, m := range r.wire.methodsOut() {
		if m == "session/prompt" {
			prompts++
		}
	}
	assert.Equal(t, 2, prompts, "both turns on the one session")
}

// twoTurnsCLI runs the two turns through one `acpdrive run` (two prompts,
// one process).
func twoTurnsCLI(t *testing.T, r *rig, srv *fakes.Server, gaps string) cliRun {
	t.Helper()
	continuationScript(srv)
	run := r.cli(firstPrompt, secondPrompt)
	require.Equal(t, 0, run.Code, run.Stderr)
	assert.Equal(t, []outcome{completed, completed}, run.outcomes())
	assertShape(t, twoTurnShape(gaps), run.shape(r))
	require.NotNil(t, run.Run)
	assert.Equal(t, 2, run.Run.Turns)
	continuedCallCarriesHistory(t, srv)
	return run
}

// cancelMidTurn starts a turn whose model call streams its first chunk and
// then waits; once that chunk reached acpdrive the turn's context is
// cancelled. acpdrive sends session/cancel, the runtime answers the prompt
// "cancelled" and makes no further model call, and the turn is
// turn_cancelled. It returns the prompt's result.
func cancelMidTurn(t *testing.T, r *rig, srv *fakes.Server) json.RawMessage {
	t.Helper()
	hold := make(chan struct{})
	defer close(hold)
	srv.Script(fakes.Reply{Text: []string{"Working on it ", "(never sent)."}, Hold: hold, Usage: fakes.Usage{Input: 40, Output: 4}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	sess := r.mustStart(func(o *app.Options) {
		o.OnAgentText = func(_, text string) {
			if strings.Contains(text, "Working on it") {
				once.Do(cancel)
			}
		}
	})
	tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer tcancel()
	res := sess.Turn(tctx, "start something long")
	r.stop(sess)
	assert.Equal(t, outcome{Outcome: "turn_cancelled", Kind: "turn_cancelled", Message: "turn cancelled"}, outcomeOf(res))
	assert.Contains(t, r.wire.methodsOut(), "session/cancel")
	resp, ok := r.wire.responseTo("session/prompt")
	require.True(t, ok, "the runtime did not answer the prompt after session/cancel")
	var pr struct {
		StopReason string `json:"stopReason"`
	}
	require.NoError(t, json.Unmarshal(resp.Result, &pr), "%s", resp.Result)
	assert.Equal(t, "cancelled", pr.StopReason)
	assert.Len(t, srv.ModelCalls(), 1, "no model call after the cancel:\n%s", srv.Describe())
	assert.NotContains(t, r.logs.String(), "did not answer the prompt after session/cancel")
	return resp.Result
}

// resumeAcrossProcesses saves a session with one `acpdrive run` and
// continues it with `acpdrive run --resume` (another process): the second
// run reports the same session id, continues it through session/load, the
// replayed first reply is reported before the turn, and the turn's model
// call carries the first turn. It returns the second run.
func resumeAcrossProcesses(t *testing.T, r *rig, srv *fakes.Server) cliRun {
	t.Helper()
	continuationScript(srv)
	first := r.cli(firstPrompt)
	require.Equal(t, 0, first.Code, first.Stderr)
	require.Equal(t, []outcome{completed}, first.outcomes())
	require.NotNil(t, first.Run)
	id := first.Run.SessionID
	require.NotEmpty(t, id)

	r.phase("resume")
	run := r.cliWith([]string{"--resume", id}, secondPrompt)
	require.Equal(t, 0, run.Code, run.Stderr)
	assert.Equal(t, []outcome{completed}, run.outcomes())
	require.NotNil(t, run.Run)
	assert.Equal(t, id, run.Run.SessionID)
	assert.Contains(t, run.Stderr, continuedLine("session/load", id))
	shape := run.shape(r)
	split := slices.Index(shape, started)
	require.GreaterOrEqual(t, split, 0, "no turn: %q", shape)
	assertShape(t, continuedTurn, shape[split:])
	assert.Contains(t, shape[:split], "notification:"+firstReply, "the replayed reply is reported before the turn")
	continuedCallCarriesHistory(t, srv)
	return run
}

// rawInit is the part of a raw initialize result the probe reports.
type rawInit struct {
	ProtocolVersion int `json:"protocolVersion"`
	AgentInfo       *struct {
		Name    string `json:"name"`
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"agentInfo"`
	AgentCapabilities struct {
		LoadSession         bool                       `json:"loadSession"`
		SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		PromptCapabilities  struct {
			Image           bool `json:"image"`
			Audio           bool `json:"audio"`
			EmbeddedContext bool `json:"embeddedContext"`
		} `json:"promptCapabilities"`
		MCPCapabilities struct {
			HTTP bool `json:"http"`
			SSE  bool `json:"sse"`
		} `json:"mcpCapabilities"`
	} `json:"agentCapabilities"`
	AuthMethods []struct {
		ID string `json:"id"`
	} `json:"authMethods"`
}

// probeFullReport is `acpdrive probe --json` with the fields compared to
// the raw initialize answer.
type probeFullReport struct {
	probeReport
	AgentInfo *struct {
		Name    string `json:"name"`
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"agent_info"`
	PromptCapabilities struct {
		Image           bool `json:"image"`
		Audio           bool `json:"audio"`
		EmbeddedContext bool `json:"embeddedContext"`
	} `json:"prompt_capabilities"`
	MCPCapabilities struct {
		HTTP bool `json:"http"`
		SSE  bool `json:"sse"`
	} `json:"mcp_capabilities"`
}

// probeMatchesInitialize takes the raw initialize answer from a library
// session on the rig, then runs `acpdrive probe --json` and `acpdrive
// probe` (the table pinned in testdata/probe/<name>.txt, as TestProbe
// does): every field the probe reports is the raw answer's, source (""
// for none) claims and measures the runtime, the probe makes no model
// call, and no process survives. It returns the report.
func probeMatchesInitialize(t *testing.T, r *rig, srv *fakes.Server, name, source string) probeFullReport {
	t.Helper()
	sess := r.mustStart()
	r.stop(sess)
	resp, ok := r.wire.responseTo("initialize")
	require.True(t, ok)
	var raw rawInit
	require.NoError(t, json.Unmarshal(resp.Result, &raw), "%s", resp.Result)
	before := len(srv.Requests())

	out, stderr, code := r.acpdrive(append([]string{"probe", "--json"}, r.launchFlags()...)...)
	require.Equal(t, 0, code, stderr)
	var rep probeFullReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	proctestGone(t, rep.PID)

	assert.Equal(t, raw.ProtocolVersion, rep.ProtocolVersion)
	require.NotNil(t, raw.AgentInfo)
	require.NotNil(t, rep.AgentInfo)
	assert.Equal(t, *raw.AgentInfo, *rep.AgentInfo)
	caps := raw.AgentCapabilities
	assert.Equal(t, caps.LoadSession, rep.LoadSession)
	assert.Equal(t, caps.PromptCapabilities, rep.PromptCapabilities)
	assert.Equal(t, caps.MCPCapabilities, rep.MCPCapabilities)
	var markers []string
	for k := range caps.SessionCapabilities {
		markers = append(markers, k)
	}
	assert.ElementsMatch(t, markers, rep.SessionCapabilities, "every advertised session capability, none other")
	var authIDs, gotIDs []string
	for _, a := range raw.AuthMethods {
		authIDs = append(authIDs, a.ID)
	}
	for _, a := range rep.AuthMethods {
		gotIDs = append(gotIDs, a.ID)
	}
	assert.Equal(t, authIDs, gotIDs)
	require.NotNil(t, rep.NegativeControl.Code, "the negative control was answered with an error")
	assert.Equal(t, int64(-32601), *rep.NegativeControl.Code)
	wantRoute := "none (session/new only)" // as the human output says it
	if caps.LoadSession {
		wantRoute = "session/load"
	}
	assert.Equal(t, wantRoute, rep.ContinuationRoute)
	wantTeardown := ""
	if _, ok := caps.SessionCapabilities["close"]; ok {
		wantTeardown = "session/close"
	}
	assert.Equal(t, wantTeardown, rep.TeardownMethod)
	assert.Equal(t, source, rep.ClaimedBy, "the shipped source that claims the command")
	assert.Equal(t, source, rep.MeasuredBy, "the shipped source that reads the runtime the handshake named")
	assert.NotContains(t, stderr, "agent session created", "a probe creates no session")
	assert.Len(t, srv.Requests(), before, "a probe calls no model:\n%s", srv.Describe())

	table, stderr, code := r.acpdrive(append([]string{"probe"}, r.launchFlags()...)...)
	require.Equal(t, 0, code, stderr)
	golden := filepath.Join("testdata", "probe", name+".txt")
	if *updateProbe {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(table), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update-probe to write it")
	assert.Equal(t, string(want), table)
	t.Logf("initialize: %s\nacpdrive probe:\n%s", resp.Result, table)
	return rep
}

// lastUserText is the text of the last message of a Chat Completions
// request, whatever its content's shape (a string or parts).
func lastMessage(t *testing.T, req fakes.Request) map[string]any {
	t.Helper()
	msgs, _ := req.JSON()["messages"].([]any)
	require.NotEmpty(t, msgs, "%s", req.Body)
	m, _ := msgs[len(msgs)-1].(map[string]any)
	return m
}

// fakeChatUsage is what a source reports for a reply of the fake Chat
// Completions server, as both Qwen Code and Copilot CLI record it:
// prompt_tokens (cache reads included) as input, completion_tokens
// (reasoning included) as output, the API's total.
func fakeChatUsage(us ...fakes.Usage) domain.Usage {
	var sum domain.Usage
	for _, u := range us {
		sum = sum.Add(domain.Usage{
			InputTokens:     int64(u.Input - u.Cached), // the one meaning: cached input out of input
			OutputTokens:    int64(u.Output + u.Thoughts),
			CacheReadTokens: int64(u.Cached),
			ReasoningTokens: int64(u.Thoughts),
			TotalTokens:     int64(u.Total()),
		})
	}
	return sum
}

// usageCalls are the fixed figures of the measured two-turn sessions:
// the first turn makes two model calls (a tool call, then text), the
// second one; different, so a running total fails the second turn.
var usageCalls = []fakes.Usage{
	{Input: 100, Output: 9, Cached: 30, Thoughts: 4},
	{Input: 130, Output: 6, Cached: 40, Thoughts: 2},
	{Input: 200, Output: 8, Cached: 50, Thoughts: 1},
}

// usageScript scripts the measured session: tool is the runtime's shell
// tool call (it runs: the rig lets the runtime run tools).
func usageScript(srv *fakes.Server, tool *fakes.ToolCall) {
	srv.Script(
		fakes.Reply{Text: []string{"Checking."}, Tool: tool, Usage: usageCalls[0]},
		fakes.TextReply(usageCalls[1], "Checked."),
		fakes.TextReply(usageCalls[2], "Again."),
	)
}

// wantUsage is each measured turn's own figures.
var wantUsage = []domain.Usage{fakeChatUsage(usageCalls[0], usageCalls[1]), fakeChatUsage(usageCalls[2])}

// measuredTwoTurnsLibrary runs the measured session on a library session
// with src as its only source: each turn's token_usage is exactly the
// fake server's figures for that turn, attributed to model; token counts
// is delivered, with no gap notice.
func measuredTwoTurnsLibrary(t *testing.T, r *rig, srv *fakes.Server, src ports.MeasurementSource, model string) {
	t.Helper()
	sess := r.mustStart(func(o *app.Options) { o.MeasurementSources = []ports.MeasurementSource{src} })
	assert.Empty(t, sess.Capabilities().Gaps(), "a claimed launch starts with token counts delivered")
	for i, prompt := range []string{"check it", "again"} {
		res := r.turn(sess, prompt)
		require.Equal(t, completed, outcomeOf(res), "turn %d", i+1)
		require.NotNil(t, res.Usage, "turn %d measured", i+1)
		assert.Equal(t, wantUsage[i], *res.Usage, "turn %d's own figures", i+1)
		assert.Equal(t, model, res.Model)
	}
	r.stop(sess)
	usages := r.rec.OfType(domain.EventTokenUsage)
	require.Len(t, usages, 2, "one token_usage per turn:\n%s", strings.Join(r.shape(), "\n"))
	for i := range usages {
		require.NotNil(t, usages[i].Usage)
		assert.Equal(t, wantUsage[i], *usages[i].Usage, "turn %d", i+1)
		assert.Equal(t, model, usages[i].Model)
	}
	assert.Empty(t, sess.Capabilities().Gaps(), "token counts stays delivered")
	assert.NotContains(t, r.shape(), gapNotice(domain.CapTokenCounts), "no gap notice")
	assert.Len(t, srv.ModelCalls(), 3, srv.Describe())
}

// measuredTwoTurnsCLI runs the measured session through `acpdrive run`
// with the shipped sources: each turn_result carries the turn's figures
// and run_result their sum over two measured turns.
func measuredTwoTurnsCLI(t *testing.T, r *rig, srv *fakes.Server, model string) cliRun {
	t.Helper()
	r.measure = true
	run := r.cli("check it", "again")
	require.Equal(t, 0, run.Code, run.Stderr)
	assert.Equal(t, []outcome{completed, completed}, run.outcomes())
	require.Len(t, run.Results, 2)
	for i, res := range run.Results {
		require.NotNil(t, res.Usage, "turn %d measured", i+1)
		assert.Equal(t, wantUsage[i], *res.Usage, "turn %d's own figures", i+1)
		assert.Equal(t, model, res.Model)
	}
	require.NotNil(t, run.Run)
	require.NotNil(t, run.Run.Usage)
	assert.Equal(t, wantUsage[0].Add(wantUsage[1]), *run.Run.Usage)
	assert.Equal(t, 2, run.Run.MeasuredTurns)
	assert.Empty(t, run.Run.CapabilityGaps)
	assert.Len(t, srv.ModelCalls(), 3, srv.Describe())
	return run
}
