//go:build interop

package interop

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// The SDK example agents stream a scripted turn with no model behind it:
// a disclaimer (Go only), a message, a read tool call that completes, a
// message, an edit tool call with a permission request offering allow and
// reject, then a message that depends on the answer. Each step is about a
// second apart.

func goSDKAgent(t *testing.T) *rig {
	return newRig(t, locate(t, "go-sdk-agent", "go-sdk-agent/agent"))
}

func tsSDKAgent(t *testing.T) *rig {
	script := locate(t, "ts-sdk", "ts-sdk/node_modules/@agentclientprotocol/sdk/dist/examples/agent.js")
	return newRig(t, nodePath(t), script)
}

// sdkIntro is the example agents' first message; the Go one opens it with
// a disclaimer.
const (
	sdkIntro   = "I'll help you with that. Let me start by reading some files to understand the current situation."
	goSDKIntro = "ACP Go Example Agent — demo only (no AI model)." + sdkIntro
)

// sdkTurnStart is how an example agent's turn opens, up to the read tool
// call completing: intro is its first message.
func sdkTurnStart(intro string) []string {
	return []string{
		started,
		gapNotice(domain.CapTokenCounts, domain.CapSessionContinuation, domain.CapAgentVersion),
		"message_chunk*",
		"notification:" + intro,
		"tool_result:read:ok",
	}
}

// sdkTurn is an example agent's turn with its permission request refused:
// the edit call it announced is never terminally updated, so it produces
// no tool_result (docs/behaviour.md#tool-results).
func sdkTurn(intro string) []string {
	return append(sdkTurnStart(intro),
		"message_chunk*",
		"notification: Now I understand the project structure. I need to make some changes to improve it.",
		refused,
		"message_chunk*",
		"notification: I understand you prefer not to make that change. I'll skip the configuration update.",
		"turn_completed",
	)
}

// goSDKTurn is the Go example agent's turn; tsSDKTurn the TypeScript
// one's (no disclaimer).
var (
	goSDKTurn = sdkTurn(goSDKIntro)
	tsSDKTurn = sdkTurn(sdkIntro)
)

func TestGoSDKAgentTurnLibrary(t *testing.T) {
	t.Parallel()
	sdkAgentTurnLibrary(t, goSDKAgent(t), goSDKTurn, "1")
}

func TestGoSDKAgentTurnCLI(t *testing.T) {
	t.Parallel()
	sdkAgentTurnCLI(t, goSDKAgent(t), goSDKTurn)
}

func TestGoSDKAgentCancel(t *testing.T) {
	t.Parallel()
	sdkAgentCancel(t, goSDKAgent(t), append(sdkTurnStart(goSDKIntro), "turn_cancelled:turn cancelled"))
}

func TestTSSDKAgentTurnLibrary(t *testing.T) {
	t.Parallel()
	sdkAgentTurnLibrary(t, tsSDKAgent(t), tsSDKTurn, "0")
}

func TestTSSDKAgentTurnCLI(t *testing.T) {
	t.Parallel()
	sdkAgentTurnCLI(t, tsSDKAgent(t), tsSDKTurn)
}

func TestTSSDKAgentCancel(t *testing.T) {
	t.Parallel()
	sdkAgentCancel(t, tsSDKAgent(t), append(sdkTurnStart(sdkIntro), "turn_cancelled:turn cancelled"))
}

func sdkAgentTurnLibrary(t *testing.T, r *rig, want []string, permID string) {
	sess := r.mustStart()
	t.Log(capsLine(sess))
	info := sess.AgentInfo()
	assert.False(t, info.Reported, "the SDK example agents send no agentInfo")
	assert.False(t, info.Advertised.LoadSession)
	adv := info.Advertised
	assert.False(t, adv.Close || adv.Resume || adv.List, "no session capability advertised")

	libraryTurn(t, r, sess, "hello from acpdrive", completed, want)

	// The permission request was refused with the reject option, and the
	// teardown did not call session/close (not advertised).
	perm, ok := r.wire.request("session/request_permission")
	require.True(t, ok, "no permission request")
	assert.Equal(t, permID, string(perm.ID))
	answer, ok := r.wire.answerTo(perm.ID)
	require.True(t, ok, "permission request not answered")
	assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"reject"}}`, string(answer.Result))
	assert.Equal(t, []string{"initialize", "session/new", "session/prompt"}, r.wire.methodsOut())
}

func sdkAgentTurnCLI(t *testing.T, r *rig, want []string) {
	run := cliCompleted(t, r, want, "hello from acpdrive")
	assertGaps(t, run, "token counts", "session continuation", "agent version")
	assert.Equal(t, 1, run.Run.Turns)
	assert.NotEmpty(t, run.Run.SessionID)
}

// sdkAgentCancel cancels the turn once the read tool call completed: the
// agent is then waiting a second before its next step, notices the
// session/cancel and answers the prompt with stopReason cancelled well
// inside the read timeout.
func sdkAgentCancel(t *testing.T, r *rig, want []string) {
	sess := r.mustStart()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	var cancelledAt time.Time
	r.rec.On(func(ev domain.Event) {
		if ev.Type == domain.EventToolResult {
			once.Do(func() { cancelledAt = time.Now(); cancel() })
		}
	})
	res := sess.Turn(ctx, "hello from acpdrive")
	answeredIn := time.Since(cancelledAt)
	r.stop(sess)

	assert.Equal(t, outcome{Outcome: "turn_cancelled", Kind: "turn_cancelled", Message: "turn cancelled"}, outcomeOf(res))
	assertShape(t, want, r.shape())
	assert.Equal(t, []string{"initialize", "session/new", "session/prompt", "session/cancel"}, r.wire.methodsOut())
	resp, ok := r.wire.responseTo("session/prompt")
	require.True(t, ok, "the agent did not answer the prompt after session/cancel")
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	// How soon the agent answers is the agent's own pace (and the
	// machine's load), not acpdrive's to guarantee: logged, not bounded.
	// What acpdrive guarantees is asserted: the answer came before its
	// cancel grace ran out (no "did not answer" line).
	t.Logf("the agent answered the prompt %s after the cancel", answeredIn.Round(time.Millisecond))
	assert.False(t, strings.Contains(r.logs.String(), "did not answer the prompt after session/cancel"))
}
