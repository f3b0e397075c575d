//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Today's releases of the Claude and Codex adapters
// (@agentclientprotocol/claude-agent-acp 0.101.0,
// @agentclientprotocol/codex-acp 2.6.0), installed as the rows
// claude-current and codex-current beside the old pins. What issue 20 asks
// of them: two measured turns whose figures are the fake server's, one
// start, a runtime notice never reply text, no event without content, and
// a probe that lists what they advertise.

// currentRow is one of today's releases and what the suite expects of it.
type currentRow struct {
	row     string
	rig     func(t testing.TB, row string) (*rig, *fakes.Server)
	measure func(r *rig) optFn
	agent   string // agentInfo.name
	version string
	usage   []fakes.Usage
	want    func(u fakes.Usage) domain.Usage
	// sessCaps must be among the advertised session capabilities.
	sessCaps []string
	authCaps []string
	// notice is a phrase of a warning the runtime sends in every turn of
	// this rig: offered clientCapabilities.session.notices, it comes as a
	// notice update ("" when none is certain).
	notice string
}

func currentRows() []currentRow {
	return []currentRow{
		{
			row: "claude-current", rig: claudeRigOf, measure: claudeMeasured,
			agent: "@agentclientprotocol/claude-agent-acp", version: "0.101.0",
			usage:    []fakes.Usage{{Input: 120, Output: 7, Cached: 30}, {Input: 210, Output: 17, Cached: 12}},
			want:     func(u fakes.Usage) domain.Usage { return anthropicUsage(u) },
			sessCaps: []string{"additionalDirectories", "close", "delete", "fork", "list", "resume", "systemPrompt"},
			authCaps: []string{"logout"},
		},
		{
			row: "codex-current", rig: codexRigOf, measure: codexMeasured,
			agent: "@agentclientprotocol/codex-acp", version: "2.6.0",
			usage:    codexTurnUsage[:2],
			want:     wantCodexUsage,
			sessCaps: []string{"close", "list", "resume", "systemPrompt", "title", "subagents"},
			// The fake provider's model is not in codex's catalogue.
			notice: "Model metadata for `" + codexModel + "` not found",
		},
	}
}

// TestCurrentReleasesTwoMeasuredTurns: two turns, each measured with the
// fake server's figures, in one start; the reply is only the reply.
func TestCurrentReleasesTwoMeasuredTurns(t *testing.T) {
	t.Parallel()
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			srv.Script(
				fakes.TextReply(c.usage[0], "First ", "answer."),
				fakes.TextReply(c.usage[1], "Second ", "answer."),
			)
			sess := r.mustStart(c.measure(r))
			agentIs(t, sess, c.agent, c.version)
			assert.Empty(t, sess.Capabilities().Gaps(), "measured, continued, identified: no gap")
			for i, prompt := range []string{"first question", "second question"} {
				res := r.turn(sess, prompt)
				require.Equal(t, completed, outcomeOf(res), "turn %d: %s", i+1, res.Message())
				require.NotNil(t, res.Usage, "turn %d measured", i+1)
				assert.Equal(t, c.want(c.usage[i]), *res.Usage, "turn %d: the fake server's figures", i+1)
			}
			assert.Equal(t, "Second answer.", sess.LastMessage().Text, "the last message is the reply, never a notice")
			r.stop(sess)
			logs := r.logs.String()
			assert.Equal(t, 1, strings.Count(logs, `msg="agent process started"`), "one start")
			assert.NotContains(t, logs, "relaunched")
			assert.Len(t, tokenUsage(r), 2)
			var kinds []string
			for _, ev := range r.rec.All() {
				kinds = append(kinds, string(ev.Type))
				switch ev.Type {
				case domain.EventSessionStarted, domain.EventTurnCompleted, domain.EventTokenUsage:
				default:
					assert.NotEmpty(t, ev.Message, "no event without content: %+v", ev)
				}
				if ev.Type == domain.EventRuntimeNotice || ev.Type == domain.EventNotification || ev.Type == domain.EventSessionInfo {
					t.Logf("%s %s: %.200q", c.row, ev.Type, ev.Message)
				}
				if ev.Type == domain.EventRuntimeNotice {
					assert.NotContains(t, r.rec.Text(), ev.Message, "a runtime notice is never reply text")
				}
			}
			for i, call := range srv.ModelCalls() {
				t.Logf("%s model call %d: %s", c.row, i, lastUserText(call))
			}
			assertNoticesOffered(t, r)
			assertNoticesRendered(t, r, c.notice, 2)
			t.Logf("%s events: %s", c.row, strings.Join(compact(kinds), " "))
			t.Logf("%s updates on the wire: %s", c.row, strings.Join(compact(updateKinds(r)), " "))
		})
	}
}

// TestCurrentReleasesProbe: probe lists what today's releases advertise.
func TestCurrentReleasesProbe(t *testing.T) {
	t.Parallel()
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, _ := c.rig(t, c.row)
			out, stderr, code := r.acpdrive(append([]string{"probe", "--session", "--json"}, r.launchFlags()...)...)
			require.Equal(t, 0, code, stderr)
			var rep struct {
				SessionCapabilities []string `json:"session_capabilities"`
				AuthCapabilities    []string `json:"auth_capabilities"`
				Providers           []string `json:"providers"`
				MetaKeys            []string `json:"meta_keys"`
				MeasuredBy          string   `json:"measured_by"`
				Session             *struct {
					CurrentMode   string            `json:"current_mode"`
					Modes         []json.RawMessage `json:"modes"`
					ConfigOptions []json.RawMessage `json:"config_options"`
					Commands      []json.RawMessage `json:"commands"`
					EndedWith     string            `json:"ended_with"`
				} `json:"session"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
			for _, k := range c.sessCaps {
				assert.Contains(t, rep.SessionCapabilities, k)
			}
			for _, k := range c.authCaps {
				assert.Contains(t, rep.AuthCapabilities, k)
			}
			assert.NotEmpty(t, rep.MeasuredBy)
			require.NotNil(t, rep.Session, out)
			assert.NotEmpty(t, rep.Session.CurrentMode)
			assert.NotEmpty(t, rep.Session.Modes)
			assert.NotEmpty(t, rep.Session.ConfigOptions)
			assert.Equal(t, "session/delete", rep.Session.EndedWith)
			t.Logf("%s probe: %s", c.row, out)
		})
	}
}

// lastUserText is the start of the last text a model call carried, for
// the log: which call of the turn it was (a reply, a title, a summary).
func lastUserText(call fakes.Request) string {
	b := call.Body
	const key = `"text":"`
	i := strings.LastIndex(string(b), key)
	if i < 0 {
		return ""
	}
	t := string(b[i+len(key):])
	return fmt.Sprintf("%.160q (%d bytes)", t, len(b))
}

// updateKinds lists the session/update kinds and the other notifications
// the runtime sent, in order.
func updateKinds(r *rig) []string {
	var out []string
	for _, m := range r.wire.messages() {
		if m.Out || m.Method == "" || len(m.ID) > 0 {
			continue
		}
		if k := m.updateKind(); k != "" {
			out = append(out, k)
			continue
		}
		out = append(out, m.Method)
	}
	return out
}

// compact collapses runs of one value into "value×n".
func compact(in []string) []string {
	var out []string
	for i := 0; i < len(in); {
		j := i
		for j < len(in) && in[j] == in[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, in[i]+"×"+strconv.Itoa(j-i))
		} else {
			out = append(out, in[i])
		}
		i = j
	}
	return out
}

// assertNoticesOffered: acpdrive's initialize offered
// clientCapabilities.session.notices (docs/behaviour.md#runtime-notices).
func assertNoticesOffered(t *testing.T, r *rig) {
	t.Helper()
	for _, m := range r.wire.messages() {
		if m.Out && m.Method == "initialize" {
			var p struct {
				ClientCapabilities struct {
					Session struct {
						Notices json.RawMessage `json:"notices"`
					} `json:"session"`
				} `json:"clientCapabilities"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &p))
			assert.JSONEq(t, `{}`, string(p.ClientCapabilities.Session.Notices), "notices offered")
			return
		}
	}
	t.Fatal("no initialize on the wire")
}

// assertNoticesRendered: every notice update on the wire is a
// runtime_notice (source notice, the runtime's severity) and never reply
// text; when phrase is set, at least min of them carry it and no agent
// text does.
func assertNoticesRendered(t *testing.T, r *rig, phrase string, min int) {
	t.Helper()
	var wire []string
	for _, m := range r.wire.messages() {
		if m.Out || m.updateKind() != "notice" {
			continue
		}
		var p struct {
			Update struct {
				Title    string `json:"title"`
				Severity string `json:"severity"`
			} `json:"update"`
		}
		require.NoError(t, json.Unmarshal(m.Params, &p))
		wire = append(wire, p.Update.Severity+" "+p.Update.Title)
	}
	var rendered []string
	for _, ev := range r.rec.All() {
		if ev.Type == domain.EventRuntimeNotice && ev.Notice != nil && ev.Notice.Source == domain.NoticeFromUpdate {
			rendered = append(rendered, ev.Notice.Severity+" "+ev.Message)
		}
	}
	require.Len(t, rendered, len(wire), "one runtime_notice per notice update: %q", wire)
	for i := range wire {
		assert.True(t, strings.HasPrefix(rendered[i], wire[i]), "the notice's severity and title: %q vs %q", rendered[i], wire[i])
	}
	if phrase == "" {
		return
	}
	var carried int
	for _, n := range rendered {
		if strings.Contains(n, phrase) {
			carried++
		}
	}
	assert.GreaterOrEqual(t, carried, min, "the runtime's warning is a runtime_notice: %q", rendered)
	assert.NotContains(t, r.rec.Text(), phrase, "the warning is never reply text")
	last := ""
	for _, ev := range r.rec.All() {
		if ev.Type == domain.EventNotification {
			last = ev.Message
		}
	}
	assert.NotContains(t, last, phrase, "the warning is never the last message")
}

// TestCurrentReleasesCLI: `acpdrive run --json` with the measurement
// sources the CLI ships, two prompts, on today's releases: one start, each
// turn_result carries the fake server's figures, no event line without
// content, and a runtime notice is never reply text.
func TestCurrentReleasesCLI(t *testing.T) {
	t.Parallel()
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			r.measure = true
			srv.Script(
				fakes.TextReply(c.usage[0], "First ", "answer."),
				fakes.TextReply(c.usage[1], "Second ", "answer."),
			)
			run := r.cli("first question", "second question")
			require.Equal(t, 0, run.Code, run.Stderr)
			require.Len(t, run.Results, 2)
			for i, res := range run.Results {
				require.NotNil(t, res.Usage, "turn %d measured", i+1)
				assert.Equal(t, c.want(c.usage[i]), *res.Usage, "turn %d: the fake server's figures", i+1)
			}
			require.NotNil(t, run.Run)
			assert.Equal(t, 2, run.Run.MeasuredTurns)
			assert.Empty(t, run.Run.CapabilityGaps)
			assert.Equal(t, 1, strings.Count(run.Stderr, `msg="agent process started"`), "one start")
			assert.NotContains(t, run.Stderr, "relaunched")
			var reply strings.Builder
			var notices []string
			for _, ev := range run.Events {
				switch ev.Type {
				case domain.EventSessionStarted, domain.EventTurnCompleted, domain.EventTokenUsage:
				default:
					assert.NotEmpty(t, ev.Message, "no event without content: %+v", ev)
				}
				switch ev.Type {
				case domain.EventMessageChunk:
					reply.WriteString(ev.Message)
				case domain.EventRuntimeNotice:
					require.NotNil(t, ev.Notice, "a runtime notice says where it came from")
					notices = append(notices, ev.Message)
				}
			}
			assert.Equal(t, "First answer.Second answer.", reply.String(), "the reply is only the reply")
			for _, n := range notices {
				assert.NotContains(t, reply.String(), n)
			}
			if c.notice != "" {
				var carried int
				for _, n := range notices {
					if strings.Contains(n, c.notice) {
						carried++
					}
				}
				assert.Equal(t, 2, carried, "the warning of each turn is a runtime_notice: %q", notices)
			}
			t.Logf("%s --json notices: %q", c.row, notices)
		})
	}
}
