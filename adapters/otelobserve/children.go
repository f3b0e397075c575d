package otelobserve

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/acpdrive/acpdrive/domain"
)

// SpanChild is a child session (a subagent the runtime runs as a session
// of its own), from its announcement to the state its work ended in, under
// the turn that was running when it was announced
// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
const SpanChild = "acpdrive.child"

// Attributes of a child span.
const (
	// AttrParentSessionID is the child's parent session id.
	AttrParentSessionID = "acp.session.parent_id"
	// AttrChildTitle and AttrChildDescription are the runtime's labels.
	AttrChildTitle       = "acp.child.title"
	AttrChildDescription = "acp.child.description"
	// AttrChildState is the child's last work state.
	AttrChildState = "acp.child.state"
)

// EventChildState is a child's change of work state (AttrChildState).
const EventChildState = "acpdrive.child.state"

// childSpan is the span of one child session.
type childSpan struct {
	ctx  context.Context
	span trace.Span
}

// childEvent records child_started (a span under the running turn, or the
// session between turns) and child_state (a span event; a work that ended
// ends the span). s.mu must be held.
func (s *session) childEventLocked(ev domain.Event) {
	if s.children == nil {
		s.children = make(map[string]childSpan)
	}
	info := domain.ChildInfo{}
	if ev.Child != nil {
		info = *ev.Child
	}
	switch ev.Type {
	case domain.EventChildStarted:
		if _, ok := s.children[ev.SessionID]; ok {
			return
		}
		parent, _ := s.currentLocked()
		ctx, span := s.o.tracer.Start(parent, SpanChild, trace.WithTimestamp(ev.Time), trace.WithAttributes(
			attribute.String(AttrSessionID, ev.SessionID),
			attribute.String(AttrParentSessionID, ev.ParentSessionID),
			attribute.String(AttrChildTitle, info.Title),
			attribute.String(AttrChildDescription, info.Description),
			attribute.String(AttrChildState, info.State),
		))
		s.children[ev.SessionID] = childSpan{ctx: ctx, span: span}
	case domain.EventChildState:
		c, ok := s.children[ev.SessionID]
		if !ok {
			return
		}
		c.span.AddEvent(EventChildState, trace.WithTimestamp(ev.Time), trace.WithAttributes(attribute.String(AttrChildState, info.State)))
		c.span.SetAttributes(attribute.String(AttrChildState, info.State))
		if info.State != domain.ChildIdle && info.State != domain.ChildUnknown {
			return
		}
		if info.StopReason != "" {
			c.span.SetAttributes(attribute.String(AttrStopReason, info.StopReason))
		}
		if info.StopReason == "error" {
			c.span.SetStatus(codes.Error, info.Error)
		} else {
			c.span.SetStatus(codes.Ok, "")
		}
		c.span.End(trace.WithTimestamp(ev.Time))
		delete(s.children, ev.SessionID)
	}
}

// childCtxLocked is the context a child's own event attaches to: its span,
// else the running turn or the session. s.mu must be held.
func (s *session) childCtxLocked(ev domain.Event) context.Context {
	if c, ok := s.children[ev.SessionID]; ok && ev.ParentSessionID != "" {
		return c.ctx
	}
	ctx, _ := s.currentLocked()
	return ctx
}

// endChildrenLocked ends the spans of children still open when the
// session ends. s.mu must be held.
func (s *session) endChildrenLocked(end trace.SpanEndOption) {
	for id, c := range s.children {
		c.span.End(end)
		delete(s.children, id)
	}
}
