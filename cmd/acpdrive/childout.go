package main

import (
	"fmt"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
)

// childIndent starts every human-output line of a child session's
// activity, under the line that announced it.
const childIndent = "  │ "

// childEvent prints one event of a child session for a person
// (docs/behaviour.md#sessions-as-resources-and-child-sessions): the
// announcement with the child's title, description and state, then the
// child's activity indented under it; its streamed chunks and context
// figures are left to the JSON output. p.mu is held.
func (p *printer) childEvent(ev domain.Event) {
	switch ev.Type {
	case domain.EventMessageChunk, domain.EventContextUsage:
		return
	}
	p.endLine()
	switch ev.Type {
	case domain.EventChildStarted:
		head := "▸ subagent " + ev.SessionID
		if c := ev.Child; c != nil {
			head += ": " + ev.Message
			if c.Description != "" && c.Description != ev.Message {
				head += " (" + c.Description + ")"
			}
			if c.State != "" {
				head += " — " + domain.ChildStateText(*c)
			}
		}
		fmt.Fprintln(p.out, head)
	case domain.EventChildState:
		fmt.Fprintf(p.out, "%sstate: %s\n", childIndent, ev.Message)
	case domain.EventNotification:
		fmt.Fprintf(p.out, "%s%s\n", childIndent, strings.ReplaceAll(ev.Message, "\n", "\n"+childIndent))
	case domain.EventToolResult:
		mark := "ok"
		if ev.ToolError {
			mark = "failed"
		}
		fmt.Fprintf(p.out, "%s⚙ %s %s (%d ms) %s\n", childIndent, ev.ToolName, mark, ev.ToolDurationMS, ev.Message)
	default:
		if ev.Message != "" {
			fmt.Fprintf(p.out, "%s· [%s] %s\n", childIndent, ev.Type, ev.Message)
		}
	}
}
