//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The Claude adapter 0.101.0 on ACP v2 (docs/behaviour.md#protocol-v2):
// CLAUDE_AGENT_ACP_PROTOCOL=v2 serves the v2 draft only, auto serves what
// the client asks for. acpdrive drives it with --protocol 2 and auto.

// v2Modes are the ways the suite puts the adapter on v2.
var v2Modes = []struct {
	name    string
	adapter string // CLAUDE_AGENT_ACP_PROTOCOL
	client  domain.ProtocolChoice
}{
	{"adapter-v2-client-2", "v2", domain.ProtocolV2},
	{"adapter-auto-client-auto", "auto", domain.ProtocolAuto},
}

// claudeV2Rig is the claude-current rig with the adapter's protocol set.
func claudeV2Rig(t *testing.T, adapter string) (*rig, *fakes.Server) {
	r, srv := claudeRigOf(t, "claude-current")
	r.setenv("CLAUDE_AGENT_ACP_PROTOCOL", adapter)
	return r, srv
}

func withProtocol(p domain.ProtocolChoice) optFn {
	return func(o *app.Options) { o.Settings.Protocol = p }
}

// TestClaudeV2TwoTurns: two turns on v2, each completed by the idle
// state_update, with the reply's text, the version in the record, and
// the prompt accepted with a messageId before the idle.
func TestClaudeV2TwoTurns(t *testing.T) {
	t.Parallel()
	for _, m := range v2Modes {
		t.Run(m.name, func(t *testing.T) {
			r, srv := claudeV2Rig(t, m.adapter)
			srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Two questions"))
			srv.Script(
				fakes.TextReply(fakes.Usage{Input: 120, Output: 7, Cached: 30}, "First ", "answer."),
				fakes.TextReply(fakes.Usage{Input: 210, Output: 17, Cached: 12}, "Second ", "answer."),
			)
			sess := r.mustStart(withProtocol(m.client), claudeMeasured(r))
			info := sess.AgentInfo()
			assert.Equal(t, "@agentclientprotocol/claude-agent-acp", info.Name)
			assert.Equal(t, "0.101.0", info.Version)
			assert.Equal(t, 2, info.ProtocolVersion)
			assert.False(t, info.Advertised.LoadSession, "v2 has no session/load")
			assert.True(t, info.Advertised.Resume && info.Advertised.Close && info.Advertised.List, "the v2 session baseline")
			assert.True(t, info.Advertised.Delete)
			usage := []fakes.Usage{{Input: 120, Output: 7, Cached: 30}, {Input: 210, Output: 17, Cached: 12}}
			for i, prompt := range []string{"first question", "second question"} {
				res := r.turn(sess, prompt)
				require.Equal(t, completed, outcomeOf(res), "turn %d: %s", i+1, res.Message())
				assert.Equal(t, "end_turn", res.StopReason)
				require.NotNil(t, res.Usage, "turn %d measured", i+1)
				assert.Equal(t, anthropicUsage(usage[i]), *res.Usage, "turn %d: the fake server's figures", i+1)
			}
			for _, idle := range idleUpdates(r) {
				t.Logf("%s idle: %s", m.name, idle)
			}
			assert.Equal(t, "Second answer.", sess.LastMessage().Text)
			resp, ok := r.wire.responseTo("session/prompt")
			require.True(t, ok)
			var accepted struct {
				MessageID string `json:"messageId"`
			}
			require.NoError(t, json.Unmarshal(resp.Result, &accepted), string(resp.Result))
			assert.NotEmpty(t, accepted.MessageID, "the prompt is accepted with the user message's id")
			kinds := updateKinds(r)
			assert.Contains(t, kinds, "state_update")
			t.Logf("%s updates on the wire: %s", m.name, strings.Join(compact(kinds), " "))
			r.stop(sess)
		})
	}
}

// TestClaudeV2OnlyNeedsV2: an adapter serving v2 only refuses the default
// --protocol 1 naming the versions it supports; auto drives it.
func TestClaudeV2OnlyNeedsV2(t *testing.T) {
	t.Parallel()
	r, srv := claudeV2Rig(t, "v2")
	_, err := r.start()
	require.Error(t, err)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
	assert.Equal(t, "agent does not support protocol version 1; it supports 2", ae.Message)

	srv.Script(fakes.TextReply(fakes.Usage{Input: 120, Output: 7}, "On ", "auto."))
	sess := r.mustStart(withProtocol(domain.ProtocolAuto))
	assert.Equal(t, 2, sess.AgentInfo().ProtocolVersion)
	res := r.turn(sess, "hello")
	require.Equal(t, completed, outcomeOf(res), res.Message())
	assert.Equal(t, "On auto.", sess.LastMessage().Text)
}

// TestClaudeV2Cancel: a turn cancelled while the model streams ends
// turn_cancelled, and the session takes the next turn.
func TestClaudeV2Cancel(t *testing.T) {
	t.Parallel()
	for _, m := range v2Modes {
		t.Run(m.name, func(t *testing.T) {
			r, srv := claudeV2Rig(t, m.adapter)
			srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "A title"))
			hold := make(chan struct{})
			defer close(hold)
			srv.Script(
				fakes.Reply{Text: []string{"Working on it ", "(never sent)."}, Hold: hold, Usage: fakes.Usage{Input: 100, Output: 5}},
				fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "After the cancel."),
			)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once sync.Once
			sess := r.mustStart(withProtocol(m.client), func(o *app.Options) {
				o.OnAgentText = func(_, text string) {
					if strings.Contains(text, "Working on it") {
						once.Do(cancel)
					}
				}
			})
			tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
			defer tcancel()
			res := sess.Turn(tctx, "start something long")
			assert.Equal(t, outcome{Outcome: "turn_cancelled", Kind: "turn_cancelled", Message: "turn cancelled"}, outcomeOf(res))
			assert.Contains(t, r.wire.methodsOut(), "session/cancel")
			assert.NotContains(t, r.logs.String(), "did not answer the prompt after session/cancel", "the idle cancelled arrived")
			res = r.turn(sess, "next")
			assert.Equal(t, completed, outcomeOf(res), res.Message())
		})
	}
}

// idleUpdates are the idle state_updates the runtime sent, raw.
func idleUpdates(r *rig) []string {
	var out []string
	for _, m := range r.wire.messages() {
		if !m.Out && m.updateKind() == "state_update" && strings.Contains(string(m.Params), `"idle"`) {
			out = append(out, string(m.Params))
		}
	}
	return out
}

// TestClaudeV2RefusedToolCall: the model asks for Bash; on v2 the
// adapter asks for permission (with title and subject), acpdrive refuses,
// the model is told and the turn completes, as on v1. The adapter's own
// default mode is "auto", which asks nothing: Claude's user settings file
// puts the session in its asking mode, "default".
func TestClaudeV2RefusedToolCall(t *testing.T) {
	t.Parallel()
	for _, m := range v2Modes {
		t.Run(m.name, func(t *testing.T) {
			r, srv := claudeV2Rig(t, m.adapter)
			srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "A title"))
			srv.Script(
				fakes.Reply{
					Text:  []string{"Let me write the file."},
					Tool:  &fakes.ToolCall{ID: "toolu_interop_1", Name: "Bash", Args: map[string]any{"command": "echo interop > out.txt", "description": "Write out.txt"}},
					Usage: fakes.Usage{Input: 100, Output: 9},
				},
				fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "I did not ", "write the file."),
			)
			// The asking mode through the session configuration: on v2 its
			// mode option (docs/behaviour.md#protocol-v2).
			sess := r.mustStart(withProtocol(m.client), withSessionConfig(domain.SessionConfig{Mode: "default"}))
			if m.client == domain.ProtocolV2 {
				assert.NotContains(t, r.wire.methodsOut(), "session/set_mode", "v2 configures through options only")
			}
			assert.Equal(t, "default", sess.Posture().Mode)
			res := r.turn(sess, "write the file")
			require.Equal(t, completed, outcomeOf(res), res.Message())
			perm, ok := r.wire.request("session/request_permission")
			require.True(t, ok, "no permission request")
			assert.Contains(t, string(perm.Params), `"subject"`, "a v2 permission request names its subject")
			assert.Contains(t, r.shape(), "notification:"+domain.MsgPermissionRefused, "the refusal is reported")
			calls := srv.ModelCalls()
			require.GreaterOrEqual(t, len(calls), 2, srv.Describe())
			last := calls[len(calls)-1]
			assert.True(t, last.BodyContains("toolu_interop_1"))
			assert.True(t, last.BodyContains(`"is_error":true`))
			assertNotWritten(t, r)
			assert.Equal(t, "I did not write the file.", sess.LastMessage().Text)
			assert.Empty(t, r.rec.OfType(domain.EventMalformed), "the tool's terminal updates are activity, not malformed")
		})
	}
}

// TestClaudeV2Resume: a session saved on v2 is continued through
// session/resume with replayFrom {"type":"start"}: the replay confirms
// it, continuation stays delivered, and the next turn has the history.
func TestClaudeV2Resume(t *testing.T) {
	t.Parallel()
	for _, m := range v2Modes {
		t.Run(m.name, func(t *testing.T) {
			r, srv := claudeV2Rig(t, m.adapter)
			srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "A title"))
			continuationScript(srv)
			sess := r.mustStart(withProtocol(m.client))
			require.Equal(t, completed, outcomeOf(r.turn(sess, firstPrompt)))
			r.stop(sess)
			id := sess.ID()

			r.phase("resume")
			r.rec.Reset()
			cont := r.mustStart(withProtocol(m.client), resume(id))
			assert.Equal(t, id, cont.ID())
			assert.Equal(t, "session/resume", cont.Route())
			assert.NotContains(t, cont.Capabilities().Gaps(), domain.CapSessionContinuation)
			call, ok := outRequest(r, "session/resume")
			require.True(t, ok)
			assert.Contains(t, string(call.Params), `"replayFrom":{"type":"start"}`)
			res := r.turn(cont, secondPrompt)
			require.Equal(t, completed, outcomeOf(res), res.Message())
			continuedCallCarriesHistory(t, srv)
			assert.Contains(t, r.shape(), "notification:"+firstReply, "the replayed reply is reported")
		})
	}
}

// TestClaudeV2ConfirmToolServers: on v2 the adapter still starts the
// declared stdio servers (sent with "type":"stdio"): the beacon confirms.
func TestClaudeV2ConfirmToolServers(t *testing.T) {
	t.Parallel()
	r, srv := claudeV2Rig(t, "v2")
	srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "A title"))
	srv.Script(fakes.TextReply(fakes.Usage{Input: 100, Output: 6}, "Hello with a beacon."))
	sess := r.mustStart(withProtocol(domain.ProtocolV2), withConfirmation(t))
	res := r.turn(sess, "hello")
	require.Equal(t, completed, outcomeOf(res), res.Message())
	check := sess.AgentInfo().ToolServers
	require.NotNil(t, check)
	assert.True(t, check.Confirmed, "%+v", check)
	assert.NotContains(t, sess.Capabilities().Gaps(), domain.CapToolServers)
	newCall, ok := outRequest(r, "session/new")
	require.True(t, ok)
	assert.Contains(t, string(newCall.Params), `"type":"stdio"`)
}

// outRequest is the first request acpdrive sent with this method.
func outRequest(r *rig, method string) (wireMsg, bool) {
	for _, m := range r.wire.messages() {
		if m.Out && m.Method == method {
			return m, true
		}
	}
	return wireMsg{}, false
}
