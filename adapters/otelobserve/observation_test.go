package otelobserve_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/acpdrive/acpdrive/adapters/otelobserve"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// TestStepsNestAndKeepTheirTimes feeds the steps of a start with a
// restart to settle (whose teardown is reported inside it), a failed
// session/load that fell back to session/new, and a final teardown: each
// step's span has its own times and parent.
func TestStepsNestAndKeepTheirTimes(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	so := obs.ObserveSession(context.Background(), ms(0))
	loadErr := domain.NewError(domain.KindResponseTimeout, domain.MsgTimedOut)
	for _, st := range []ports.Step{
		{Name: ports.StepLaunch, Start: ms(0), End: ms(10)},
		{Name: ports.StepInitialize, Start: ms(10), End: ms(20)},
		{Name: ports.StepCloseStdin, Within: ports.StepTeardown, Start: ms(21), End: ms(22)},
		{Name: ports.StepKill, Within: ports.StepTeardown, Start: ms(22), End: ms(25)},
		{Name: ports.StepTeardown, Within: ports.StepRestart, Start: ms(21), End: ms(26)},
		{Name: ports.StepRestart, Start: ms(20), End: ms(27)},
		{Name: ports.StepLaunch, Start: ms(27), End: ms(30)},
		{Name: ports.StepInitialize, Start: ms(30), End: ms(40)},
		{Name: ports.StepSessionLoad, Start: ms(40), End: ms(50), Err: loadErr},
		{Name: ports.StepSessionNew, Start: ms(50), End: ms(55)},
	} {
		so.Step(st)
	}
	so.Started(ports.SessionInfo{At: ms(55), SessionID: "s-1", Route: "session/new",
		Agent: domain.AgentInfo{Name: "acme", Version: "1.2.3"}})
	so.Step(ports.Step{Name: ports.StepRelease, Within: ports.StepTeardown, Start: ms(60), End: ms(61)})
	so.Step(ports.Step{Name: ports.StepTeardown, Start: ms(59), End: ms(62)})
	so.Ended(ports.SessionEnd{At: ms(62), Started: true})

	tree := newTree(tel.spans.Ended())
	t.Logf("span tree:\n%s", tree.String())
	root := tree.only(t, otelobserve.SpanSession)
	type want struct {
		name       string
		start, end int
		kids       []string
	}
	var got []want
	for _, c := range tree.children(root) {
		w := want{name: c.Name(), start: int(c.StartTime().Sub(t0).Milliseconds()), end: int(c.EndTime().Sub(t0).Milliseconds())}
		for _, k := range tree.children(c) {
			w.kids = append(w.kids, k.Name())
			for _, kk := range tree.children(k) {
				w.kids = append(w.kids, "  "+kk.Name())
			}
		}
		got = append(got, w)
	}
	assert.Equal(t, []want{
		{"acpdrive.start.launch", 0, 10, nil},
		{"acpdrive.start.initialize", 10, 20, nil},
		{"acpdrive.start.restart", 20, 27, []string{"acpdrive.teardown", "  acpdrive.teardown.close_stdin", "  acpdrive.teardown.kill"}},
		{"acpdrive.start.launch", 27, 30, nil},
		{"acpdrive.start.initialize", 30, 40, nil},
		{"acpdrive.start.session/load", 40, 50, nil},
		{"acpdrive.start.session/new", 50, 55, nil},
		{"acpdrive.teardown", 59, 62, []string{"acpdrive.teardown.release"}},
	}, got)
	load := tree.only(t, "acpdrive.start.session/load")
	assert.Equal(t, codes.Error, load.Status().Code)
	assert.Equal(t, "response_timeout", attrMap(load.Attributes())[otelobserve.AttrErrorKind].AsString())

	ms := tel.metrics(t)
	assert.Equal(t, map[string]uint64{"": 2}, counts(t, ms[otelobserve.MetricTeardownDuration], ""),
		"the restart's teardown and the final one")
}

// TestFailedStart: a start that failed ends the session span with the
// error, counts no running session and records a failed start.
func TestFailedStart(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	so := obs.ObserveSession(context.Background(), ms(0))
	startErr := domain.NewError(domain.KindAgentNotFound, "failed to start subprocess")
	so.Step(ports.Step{Name: ports.StepLaunch, Start: ms(0), End: ms(3), Err: startErr})
	so.Observe(domain.Event{Type: domain.EventStartupFailed, Time: ms(4), Message: startErr.Message})
	so.Ended(ports.SessionEnd{At: ms(4), Err: startErr})
	so.Ended(ports.SessionEnd{At: ms(9)}) // a second end changes nothing

	spans := tel.spans.Ended()
	require.Len(t, spans, 2)
	root := newTree(spans).only(t, otelobserve.SpanSession)
	assert.Equal(t, codes.Error, root.Status().Code)
	assert.Equal(t, ms(4), root.EndTime())
	assert.Equal(t, "agent_not_found", attrMap(root.Attributes())[otelobserve.AttrErrorKind].AsString())
	m := tel.metrics(t)
	assert.Equal(t, map[string]uint64{otelobserve.StartFailed: 1}, counts(t, m[otelobserve.MetricStartDuration], otelobserve.AttrStartOutcome))
	assert.NotContains(t, m, otelobserve.MetricSessionsRunning)
}

// TestTurnAttributesAndTokens: a failed turn's error kind and
// retryability, a measured turn's tokens on the span and the counter,
// notices and malformed lines as events of the running turn.
func TestTurnAttributesAndTokens(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	so := obs.ObserveSession(context.Background(), ms(0))
	so.Started(ports.SessionInfo{At: ms(1), SessionID: "s-1", Agent: domain.AgentInfo{Name: "acme"}})

	meta := so.TurnStarted(ms(2))
	require.Contains(t, meta, "traceparent")
	so.Notice(ms(3), domain.MsgPermissionRefused)
	so.Observe(domain.Event{Type: domain.EventMalformed, Time: ms(4), Message: domain.MsgUnknownUpdate})
	so.Observe(domain.Event{Type: domain.EventNotification, Time: ms(4), Message: "the agent's own words"})
	so.TurnEnded(ms(5), domain.TurnResult{Outcome: domain.OutcomeCompleted, StopReason: "end_turn",
		Usage: &domain.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 80, TotalTokens: 120}, Model: "acme-1"})

	so.TurnStarted(ms(6))
	so.TurnEnded(ms(7), domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult)))
	so.TurnStarted(ms(8)) // still open when the session ends
	so.Ended(ports.SessionEnd{At: ms(9), Started: true, Err: errors.New("survivors")})

	turns := newTree(tel.spans.Ended()).named(otelobserve.SpanTurn)
	require.Len(t, turns, 3)
	a := attrMap(turns[0].Attributes())
	assert.Equal(t, int64(100), a[otelobserve.AttrTokensInput].AsInt64())
	assert.Equal(t, int64(120), a[otelobserve.AttrTokensTotal].AsInt64())
	assert.Equal(t, "acme-1", a[otelobserve.AttrModel].AsString())
	var evs []string
	for _, ev := range turns[0].Events() {
		evs = append(evs, ev.Name+": "+ev.Attributes[0].Value.AsString())
	}
	assert.Equal(t, []string{
		otelobserve.EventNotice + ": " + domain.MsgPermissionRefused,
		otelobserve.EventMalformed + ": " + domain.MsgUnknownUpdate,
	}, evs, "the agent's own text is not recorded")

	b := attrMap(turns[1].Attributes())
	assert.Equal(t, codes.Error, turns[1].Status().Code)
	assert.Equal(t, "port_exit", b[otelobserve.AttrErrorKind].AsString())
	assert.Equal(t, domain.KindPortExit.Retryable(), b[otelobserve.AttrErrorRetryable].AsBool())
	assert.Equal(t, ms(9), turns[2].EndTime())

	m := tel.metrics(t)
	tokens := sums(t, m[otelobserve.MetricTokens], otelobserve.AttrTokenKind)
	assert.Equal(t, map[string]int64{"input": 100, "output": 20, "cache_read": 80}, tokens)
	assert.Equal(t, map[string]int64{"acme": 0}, sums(t, m[otelobserve.MetricSessionsRunning], otelobserve.AttrAgentName))
}

// TestNilProvidersAreNoOps: without providers nothing is recorded and
// the prompt carries no trace context.
func TestNilProvidersAreNoOps(t *testing.T) {
	obs, err := otelobserve.New(nil, nil)
	require.NoError(t, err)
	so := obs.ObserveSession(context.Background(), ms(0))
	assert.Nil(t, so.TurnStarted(ms(1)))
	so.TurnEnded(ms(2), domain.TurnResult{Outcome: domain.OutcomeCompleted})
	so.Ended(ports.SessionEnd{At: ms(3)})
}

// TestSessionJoinsTheCallersTrace: the session span is a child of the
// span in the start's context, and a cancelled context changes nothing.
func TestSessionJoinsTheCallersTrace(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	ctx, parent := tel.tp.Tracer("orchestrator").Start(context.Background(), "dispatch issue")
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	so := obs.ObserveSession(ctx, ms(0))
	meta := so.TurnStarted(ms(1))
	so.TurnEnded(ms(2), domain.TurnResult{Outcome: domain.OutcomeCompleted, StopReason: "end_turn"})
	so.Ended(ports.SessionEnd{At: ms(3)})
	parent.End()

	tree := newTree(tel.spans.Ended())
	session := tree.only(t, otelobserve.SpanSession)
	assert.Equal(t, parent.SpanContext().SpanID(), session.Parent().SpanID())
	assert.Equal(t, parent.SpanContext().TraceID(), session.SpanContext().TraceID())
	turn := tree.only(t, otelobserve.SpanTurn)
	assert.Equal(t, "00-"+parent.SpanContext().TraceID().String()+"-"+turn.SpanContext().SpanID().String()+"-01", meta["traceparent"])
}

// TestPermissionDecisionIsASpanEvent: every permission decision is a span
// event of the running turn, with what was asked and what decided
// (docs/behaviour.md#permission-posture).
func TestPermissionDecisionIsASpanEvent(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	so := obs.ObserveSession(context.Background(), ms(0))
	so.Started(ports.SessionInfo{At: ms(1), SessionID: "s-1"})
	so.TurnStarted(ms(2))
	info := domain.PermissionInfo{Request: domain.PermissionRequest{Kind: domain.ToolEdit, Title: "Edit a.go", Session: domain.PermissionParent},
		Decision: domain.PermissionAllow, By: "preset edit", OptionID: "allow-1"}
	so.Observe(domain.Event{Type: domain.EventPermissionDecision, Time: ms(3), Message: info.PermissionMessage(), Permission: &info})
	so.TurnEnded(ms(4), domain.TurnResult{Outcome: domain.OutcomeCompleted, StopReason: "end_turn"})
	so.Ended(ports.SessionEnd{At: ms(5), Started: true})

	turns := newTree(tel.spans.Ended()).named(otelobserve.SpanTurn)
	require.Len(t, turns, 1)
	evs := turns[0].Events()
	require.Len(t, evs, 1)
	assert.Equal(t, otelobserve.EventPermissionDecision, evs[0].Name)
	a := attrMap(evs[0].Attributes)
	assert.Equal(t, "allow", a[otelobserve.AttrPermissionDecision].AsString())
	assert.Equal(t, "preset edit", a[otelobserve.AttrPermissionBy].AsString())
	assert.Equal(t, "allow-1", a[otelobserve.AttrPermissionOption].AsString())
	assert.Equal(t, "edit", a[otelobserve.AttrToolKind].AsString())
	assert.Equal(t, "parent", a[otelobserve.AttrPermissionSession].AsString())
}

// TestTurnFailureClass: a failed turn's span carries its failure class,
// and its retryability follows the class, not the kind.
func TestTurnFailureClass(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	so := obs.ObserveSession(context.Background(), ms(0))
	so.Started(ports.SessionInfo{At: ms(1), SessionID: "s-1", Agent: domain.AgentInfo{Name: "acme"}})
	so.TurnStarted(ms(2))
	res := domain.FailedResult(domain.NewError(domain.KindResponseError, "no credit"))
	res.Failure = &domain.Failure{Class: domain.FailureQuotaExhausted, Evidence: "e"}
	so.TurnEnded(ms(3), res)
	so.Ended(ports.SessionEnd{At: ms(4), Started: true})

	turns := newTree(tel.spans.Ended()).named(otelobserve.SpanTurn)
	require.Len(t, turns, 1)
	a := attrMap(turns[0].Attributes())
	assert.Equal(t, "quota_exhausted", a[otelobserve.AttrFailureClass].AsString())
	assert.False(t, a[otelobserve.AttrErrorRetryable].AsBool(), "response_error is retryable; an exhausted quota is not")
}
