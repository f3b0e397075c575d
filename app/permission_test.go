package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

func withPermissions(p domain.PermissionPolicy) option {
	return func(o *app.Options) { o.Settings.Permissions = p }
}

// rulesPolicy parses rules text into a rules policy.
func rulesPolicy(t *testing.T, text string) domain.PermissionPolicy {
	t.Helper()
	rules, errs := domain.ParsePermissionRules(text)
	require.Empty(t, errs)
	return domain.PermissionPolicy{Preset: domain.PresetRules, Source: "rules.txt", Rules: rules}
}

// decisions are the permission_decision events recorded, in order.
func decisions(h *harness) []domain.PermissionInfo {
	var out []domain.PermissionInfo
	for _, ev := range h.rec.OfType(domain.EventPermissionDecision) {
		require.NotNil(h.t, ev.Permission)
		out = append(out, *ev.Permission)
	}
	return out
}

// TestPermissionPresetEdit: under the edit preset an edit inside the
// workspace gets allow_once, one outside and a shell command get
// reject_once, and each decision is an event
// (docs/behaviour.md#permission-posture).
func TestPermissionPresetEdit(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "permission-policy.json"), withPermissions(domain.PermissionPolicy{Preset: domain.PresetEdit}))
	for _, turn := range []string{"#inside", "#outside", "#execute"} {
		res := h.turn(turn)
		require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	}
	answers := received(t, h.agentLg, "session/request_permission")
	require.Len(t, answers, 3)
	assert.Contains(t, string(answers[0].Message), `"optionId":"allow-once"`)
	assert.Contains(t, string(answers[1].Message), `"optionId":"reject-once"`)
	assert.Contains(t, string(answers[2].Message), `"optionId":"reject-once"`)
	ds := decisions(h)
	require.Len(t, ds, 3)
	assert.Equal(t, domain.PermissionAllow, ds[0].Decision)
	assert.Equal(t, "allow-once", ds[0].OptionID)
	assert.Equal(t, "preset edit", ds[0].By)
	assert.True(t, ds[0].Request.Inside())
	assert.Equal(t, domain.PermissionParent, ds[0].Request.Session)
	assert.Equal(t, domain.PermissionRefuse, ds[1].Decision)
	assert.False(t, ds[1].Request.Paths[0].Inside)
	assert.Equal(t, domain.PermissionRefuse, ds[2].Decision)
	assert.Equal(t, "make", ds[2].Request.Command)
	// An allowed request draws no refusal notice; each refusal does, and
	// says what decided it (docs/behaviour.md#permission-decisions).
	var refusals []string
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		if strings.HasPrefix(ev.Message, domain.MsgPermissionRefusedPrefix) {
			refusals = append(refusals, ev.Message)
		}
	}
	require.Len(t, refusals, 2)
	assert.Contains(t, refusals[0], "outside the workspace")
	assert.Contains(t, refusals[1], "not a request of kind execute")
}

// TestPermissionRulesPerson: a rules file sending execute to a person
// ends the turn turn_input_required, as a request with no refusing option
// does today.
func TestPermissionRulesPerson(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "permission-policy.json"),
		withPermissions(rulesPolicy(t, "allow kind=edit path=inside\nperson kind=execute\nrefuse\n")))
	res := h.turn("#inside")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	res = h.turn("#execute")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnInputRequired, res.Err.Kind)
	ds := decisions(h)
	require.Len(t, ds, 2)
	assert.Equal(t, "rules rules.txt:1", ds[0].By)
	assert.Equal(t, domain.PermissionPerson, ds[1].Decision)
	assert.Equal(t, "rules rules.txt:2", ds[1].By)
	assert.Empty(t, ds[1].OptionID)
	answers := received(t, h.agentLg, "session/request_permission")
	require.Len(t, answers, 2)
	assert.Contains(t, string(answers[1].Message), `"outcome":"cancelled"`)
}

// TestPermissionBetweenTurns: a request between turns is the policy's too:
// allowed, it holds no ending and the next turn runs.
func TestPermissionBetweenTurns(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "permission-policy.json"), withPermissions(domain.PermissionPolicy{Preset: domain.PresetEdit}))
	res := h.turn("#between")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	h.waitText("permission outcome: selected allow-once")
	res = h.turn("#inside")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	ds := decisions(h)
	require.Len(t, ds, 2)
	assert.Equal(t, domain.PermissionAllow, ds[0].Decision)
	assert.Equal(t, domain.PermissionAllow, ds[1].Decision)
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 2, "no ending was held")
}

// TestPermissionOtherSession: a request naming a session this run does
// not follow is never the policy's: refused.
func TestPermissionOtherSession(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "permission-policy.json"), withPermissions(domain.PermissionPolicy{Preset: domain.PresetEdit}))
	res := h.turn("#other")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	ds := decisions(h)
	require.Len(t, ds, 1)
	assert.Equal(t, domain.PermissionRefuse, ds[0].Decision)
	assert.Equal(t, "other_session", ds[0].By)
	assert.Equal(t, domain.PermissionOther, ds[0].Request.Session)
}

// TestPermissionChildAllowed: a child's request is the policy's, asked
// with session child; allowed, the child is not ended.
func TestPermissionChildAllowed(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withSubagents(), withPermissions(rulesPolicy(t, "allow kind=edit session=child\nrefuse\n")))
	res := h.turn("#subagent-permission")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Text(), "allow-once", "the child's request got allow_once")
	assert.Empty(t, received(t, h.agentLg, "session/cancel"), "an allowed child is not ended")
	var ds []domain.PermissionInfo
	for _, ev := range ofSession(h.rec.All(), refagent.ChildSessionID) {
		if ev.Type == domain.EventPermissionDecision {
			ds = append(ds, *ev.Permission)
		}
	}
	require.Len(t, ds, 1, "the decision is the child's event")
	assert.Equal(t, domain.PermissionChild, ds[0].Request.Session)
	assert.Equal(t, domain.PermissionAllow, ds[0].Decision)
}

// TestPermissionChildRefusedByRule: a rule refusing children ends the
// child as today.
func TestPermissionChildRefusedByRule(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withSubagents(), withPermissions(rulesPolicy(t, "refuse session=child\nallow\n")))
	res := h.turn("#subagent-permission")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Text(), "reject-once")
	h.waitReceived("session/cancel", 1)
}

// portPolicy is a caller's own policy through the port.
type portPolicy struct{ asked []domain.PermissionRequest }

func (p *portPolicy) Decide(r domain.PermissionRequest) domain.PermissionDecision {
	p.asked = append(p.asked, r)
	return domain.PermissionDecision{Verdict: domain.PermissionAllow, By: "mine"}
}

var _ ports.PermissionPolicy = (*portPolicy)(nil)

// TestPermissionPolicyPort: Options.PermissionPolicy is asked with the
// paths judged; it wins over Settings.Permissions.
func TestPermissionPolicyPort(t *testing.T) {
	t.Parallel()
	pol := &portPolicy{}
	h := start(t, script(t, "permission-policy.json"), func(o *app.Options) {
		o.PermissionPolicy = pol
		o.Settings.Permissions = domain.PermissionPolicy{Preset: domain.PresetRefuse}
		require.NoError(t, os.WriteFile(filepath.Join(o.Workspace, "a.txt"), nil, 0o600))
	})
	res := h.turn("#outside")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	h.stop()
	require.Len(t, pol.asked, 1)
	assert.Equal(t, domain.ToolEdit, pol.asked[0].Kind)
	assert.False(t, pol.asked[0].Inside())
	ds := decisions(h)
	require.Len(t, ds, 1)
	assert.Equal(t, "mine", ds[0].By)
	assert.Equal(t, domain.PermissionAllow, ds[0].Decision, "the caller's policy decides, even outside")
}
