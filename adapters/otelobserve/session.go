package otelobserve

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// session is the observation of one session: its span, the running turn's
// span and the steps still waiting for the step they are within.
type session struct {
	o     *Observer
	ctx   context.Context // carries the session span
	span  trace.Span
	began time.Time

	mu        sync.Mutex // guards the fields below
	agentName string
	started   bool
	ended     bool
	turnCtx   context.Context // carries the running turn's span; nil between turns
	turn      trace.Span
	pending   []ports.Step
	children  map[string]childSpan // the child sessions still working
}

var _ ports.SessionObservation = (*session)(nil)

// current is the context events attach to: the running turn, else the
// session. s.mu must be held.
func (s *session) currentLocked() (context.Context, trace.Span) {
	if s.turn != nil {
		return s.turnCtx, s.turn
	}
	return s.ctx, s.span
}

// Observe turns a tool result into a tool call span and a malformed line
// into a span event. The agent's text is not recorded.
func (s *session) Observe(ev domain.Event) {
	switch ev.Type {
	case domain.EventChildStarted, domain.EventChildState:
		s.mu.Lock()
		s.childEventLocked(ev)
		s.mu.Unlock()
	case domain.EventToolResult:
		s.toolCall(ev)
	case domain.EventMalformed:
		s.mu.Lock()
		_, span := s.currentLocked()
		span.AddEvent(EventMalformed, trace.WithTimestamp(ev.Time),
			trace.WithAttributes(attribute.String(AttrMessage, ev.Message)))
		s.mu.Unlock()
	case domain.EventPermissionDecision:
		s.permission(ev)
	case domain.EventSessionStarted, domain.EventResultFollowUp:
		s.mu.Lock()
		if s.turn != nil {
			s.turn.SetAttributes(attribute.String(AttrSessionID, ev.SessionID))
		}
		s.mu.Unlock()
	}
}

// permission records a permission decision as a span event of the running
// turn (or the session, between turns).
func (s *session) permission(ev domain.Event) {
	if ev.Permission == nil {
		return
	}
	p := ev.Permission
	attrs := []attribute.KeyValue{
		attribute.String(AttrToolKind, string(p.Request.Kind)),
		attribute.String(AttrToolTitle, p.Request.Title),
		attribute.String(AttrPermissionDecision, string(p.Decision)),
		attribute.String(AttrPermissionBy, p.By),
		attribute.String(AttrPermissionOption, p.OptionID),
		attribute.String(AttrPermissionSession, p.Request.Session),
		attribute.String(AttrMessage, ev.Message),
	}
	if ev.ParentSessionID != "" {
		attrs = append(attrs, attribute.String(AttrSessionID, ev.SessionID))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, span := s.currentLocked()
	span.AddEvent(EventPermissionDecision, trace.WithTimestamp(ev.Time), trace.WithAttributes(attrs...))
}

// toolCall records one tool call that reached a terminal status as a
// span that ends when the event happened and began its duration before.
func (s *session) toolCall(ev domain.Event) {
	end := ev.Time
	began := end.Add(-time.Duration(ev.ToolDurationMS) * time.Millisecond)
	attrs := []attribute.KeyValue{
		attribute.String(AttrToolKind, ev.ToolName),
		attribute.String(AttrToolTitle, ev.Message),
		attribute.Int64(AttrToolDurationMS, ev.ToolDurationMS),
		attribute.Bool(AttrToolError, ev.ToolError),
	}
	if ev.ParentSessionID != "" {
		attrs = append(attrs, attribute.String(AttrSessionID, ev.SessionID))
	}
	s.mu.Lock()
	parent := s.childCtxLocked(ev)
	_, span := s.o.tracer.Start(parent, SpanToolCall, trace.WithTimestamp(began), trace.WithAttributes(attrs...))
	if ev.ToolError {
		span.SetStatus(codes.Error, "tool call failed")
	}
	span.End(trace.WithTimestamp(end))
	s.mu.Unlock()
	s.o.inst.toolCalls.Add(context.Background(), 1, metric.WithAttributes(
		attribute.String(AttrToolKind, ev.ToolName), attribute.Bool(AttrToolError, ev.ToolError)))
}

// Notice records a notice of acpdrive's own as a span event.
func (s *session) Notice(at time.Time, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, span := s.currentLocked()
	span.AddEvent(EventNotice, trace.WithTimestamp(at), trace.WithAttributes(attribute.String(AttrMessage, message)))
}

// Step records a step as a child span of the session, or keeps it until
// the step it is within arrives.
func (s *session) Step(st ports.Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if st.Within != "" {
		s.pending = append(s.pending, st)
		return
	}
	s.emitLocked(s.ctx, st)
}

// emitLocked records st under parent, then the pending steps within it.
func (s *session) emitLocked(parent context.Context, st ports.Step) {
	teardown := st.Name == ports.StepTeardown || st.Within == ports.StepTeardown
	name := spanStartPrefix + st.Name
	switch {
	case st.Name == ports.StepTeardown:
		name = SpanTeardown
	case teardown:
		name = SpanTeardown + "." + st.Name
	}
	ctx, span := s.o.tracer.Start(parent, name, trace.WithTimestamp(st.Start),
		trace.WithAttributes(attribute.String(AttrStep, st.Name)))
	if st.Err != nil {
		span.SetStatus(codes.Error, st.Err.Error())
		if kind, ok := domain.KindOf(st.Err); ok {
			span.SetAttributes(attribute.String(AttrErrorKind, string(kind)))
		}
	}
	var rest []ports.Step
	var inner []ports.Step
	for _, p := range s.pending {
		if p.Within == st.Name {
			inner = append(inner, p)
		} else {
			rest = append(rest, p)
		}
	}
	s.pending = rest
	for _, p := range inner {
		s.emitLocked(ctx, p)
	}
	span.End(trace.WithTimestamp(st.End))
	if st.Name == ports.StepTeardown {
		s.o.inst.teardown.Record(context.Background(), st.End.Sub(st.Start).Seconds())
	}
}

// Started records what the session is known by and counts it running.
func (s *session) Started(info ports.SessionInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.started {
		return
	}
	s.started = true
	s.agentName = info.Agent.Name
	s.span.SetAttributes(
		attribute.String(AttrSessionID, info.SessionID),
		attribute.String(AttrAgentName, info.Agent.Name),
		attribute.String(AttrAgentVersion, info.Agent.Version),
		attribute.Int(AttrProtocolVersion, info.Agent.ProtocolVersion),
		attribute.String(AttrRoute, info.Route),
		attribute.Bool(AttrRemote, info.Remote),
		attribute.StringSlice(AttrCapabilityGaps, gaps(info.Capabilities)),
	)
	s.o.inst.start.Record(context.Background(), info.At.Sub(s.began).Seconds(),
		metric.WithAttributes(attribute.String(AttrStartOutcome, StartStarted)))
	s.o.inst.running.Add(context.Background(), 1, metric.WithAttributes(attribute.String(AttrAgentName, s.agentName)))
}

// TurnStarted opens the turn's span (a client span: the runtime may
// continue it) and returns its W3C trace context for the prompt's _meta.
func (s *session) TurnStarted(at time.Time) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil
	}
	if s.turn != nil {
		s.turn.End(trace.WithTimestamp(at))
	}
	s.turnCtx, s.turn = s.o.tracer.Start(s.ctx, SpanTurn, trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindClient))
	carrier := propagation.MapCarrier{}
	s.o.prop.Inject(s.turnCtx, carrier)
	if len(carrier) == 0 {
		return nil // a span that is not recorded and carries no context
	}
	return carrier
}

// TurnEnded records the turn's result on its span, ends it, and counts
// the turn and its tokens.
func (s *session) TurnEnded(at time.Time, res domain.TurnResult) {
	s.mu.Lock()
	span := s.turn
	s.turn, s.turnCtx = nil, nil
	s.mu.Unlock()
	if span == nil {
		return
	}
	attrs := []attribute.KeyValue{attribute.String(AttrTurnOutcome, string(res.Outcome))}
	if res.StopReason != "" {
		attrs = append(attrs, attribute.String(AttrStopReason, res.StopReason))
	}
	if res.Err != nil {
		attrs = append(attrs,
			attribute.String(AttrErrorKind, string(res.Err.Kind)),
			attribute.Bool(AttrErrorRetryable, res.Retryable()))
	}
	if res.Failure != nil {
		attrs = append(attrs, attribute.String(AttrFailureClass, string(res.Failure.Class)))
	}
	if u := res.Usage; u != nil {
		attrs = append(attrs, attribute.String(AttrModel, res.Model))
		for _, f := range figures(*u) {
			attrs = append(attrs, attribute.Int64(f.attr, f.n))
			if f.kind != "" && f.n > 0 {
				s.o.inst.tokens.Add(context.Background(), f.n, metric.WithAttributes(
					attribute.String(AttrModel, res.Model), attribute.String(AttrTokenKind, f.kind)))
			}
		}
	}
	attrs = append(attrs, s.o.inst.spend(res)...)
	span.SetAttributes(attrs...)
	switch res.Outcome {
	case domain.OutcomeCompleted:
		span.SetStatus(codes.Ok, "")
	case domain.OutcomeFailed:
		span.SetStatus(codes.Error, res.Message())
	}
	span.End(trace.WithTimestamp(at))
	s.o.inst.turns.Add(context.Background(), 1, metric.WithAttributes(attribute.String(AttrTurnOutcome, string(res.Outcome))))
}

// figure is one token figure: its span attribute and its metric kind
// ("" for the total, which is not counted twice).
type figure struct {
	attr, kind string
	n          int64
}

func figures(u domain.Usage) []figure {
	return []figure{
		{AttrTokensInput, "input", u.InputTokens},
		{AttrTokensOutput, "output", u.OutputTokens},
		{AttrTokensCacheRead, "cache_read", u.CacheReadTokens},
		{AttrTokensCacheWrite, "cache_write", u.CacheWriteTokens},
		{AttrTokensReasoning, "reasoning", u.ReasoningTokens},
		{AttrTokensToolUse, "tool_use", u.ToolUseTokens},
		{AttrTokensTotal, "", u.TotalTokens},
	}
}

// Ended ends the session span (and a turn span left open), with the
// capability gaps at the end and the status of the start or teardown.
func (s *session) Ended(end ports.SessionEnd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.ended = true
	if s.turn != nil {
		s.turn.End(trace.WithTimestamp(end.At))
		s.turn, s.turnCtx = nil, nil
	}
	s.endChildrenLocked(trace.WithTimestamp(end.At))
	for _, p := range s.pending { // steps whose enclosing step never came
		s.emitLocked(s.ctx, ports.Step{Name: p.Within, Start: p.Start, End: p.End})
	}
	s.span.SetAttributes(attribute.StringSlice(AttrCapabilityGaps, gaps(end.Capabilities)))
	if end.Err != nil {
		s.span.SetStatus(codes.Error, end.Err.Error())
		if kind, ok := domain.KindOf(end.Err); ok {
			s.span.SetAttributes(attribute.String(AttrErrorKind, string(kind)))
		}
	} else {
		s.span.SetStatus(codes.Ok, "")
	}
	s.span.End(trace.WithTimestamp(end.At))
	if end.Started {
		s.o.inst.running.Add(context.Background(), -1, metric.WithAttributes(attribute.String(AttrAgentName, s.agentName)))
		return
	}
	s.o.inst.start.Record(context.Background(), end.At.Sub(s.began).Seconds(),
		metric.WithAttributes(attribute.String(AttrStartOutcome, StartFailed)))
}

// gaps lists the capability entries in the gap state, in the record's order.
func gaps(c domain.Capabilities) []string {
	out := []string{}
	for _, g := range c.Gaps() {
		out = append(out, string(g))
	}
	return out
}
