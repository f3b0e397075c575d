package app

import (
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// sessionStateEvent maps the updates that describe the session rather
// than the turn (docs/behaviour.md#events): available commands, the
// current mode, configuration options, title and context use. ok is false
// for any other update, and for one with nothing to report.
func sessionStateEvent(u acpwire.Update) (ev domain.Event, ok bool) {
	switch {
	case u.Commands != nil:
		cmds := make([]domain.Command, 0, len(u.Commands.AvailableCommands))
		for _, c := range u.Commands.AvailableCommands {
			cmds = append(cmds, domain.Command{Name: c.Name, Description: c.Description})
		}
		return domain.Event{Type: domain.EventCommandsAvailable, Commands: cmds, Message: domain.CommandsText(cmds)}, true
	case u.Mode != nil:
		if u.Mode.CurrentModeID == "" {
			return ev, false
		}
		id := domain.TruncateRunes(u.Mode.CurrentModeID, domain.MessageCap)
		return domain.Event{Type: domain.EventModeChanged, ModeID: id, Message: id}, true
	case u.Config != nil:
		opts := configOptions(u.Config.ConfigOptions)
		return domain.Event{Type: domain.EventConfigOptions, ConfigOptions: opts, Message: domain.ConfigText(opts)}, true
	case u.Info != nil:
		ev = domain.Event{Type: domain.EventSessionInfo}
		if u.Info.Title != nil {
			ev.Title = domain.TruncateRunes(*u.Info.Title, domain.MessageCap)
			ev.Message = ev.Title
		}
		if u.Info.UpdatedAt != nil {
			ev.UpdatedAt = domain.TruncateRunes(*u.Info.UpdatedAt, domain.MessageCap)
		}
		return ev, ev.Title != "" || ev.UpdatedAt != ""
	case u.Usage != nil:
		c := &domain.ContextUsage{Used: u.Usage.Used, Size: u.Usage.Size, Cost: u.Usage.Cost}
		return domain.Event{Type: domain.EventContextUsage, Context: c, Message: c.String()}, true
	}
	return ev, false
}

// configOptions turns the wire's options into the domain's.
func configOptions(in []acpwire.ConfigOption) []domain.ConfigOption {
	out := make([]domain.ConfigOption, 0, len(in))
	for _, o := range in {
		out = append(out, domain.ConfigOption{ID: o.ID, Name: o.Name, Category: o.Category, Value: o.Value(), Values: o.Values()})
	}
	return out
}

// planEntries is a plan update's entries, never nil.
func planEntries(p *acpwire.Plan) []domain.PlanEntry {
	return append([]domain.PlanEntry{}, p.Entries...)
}

// noticeText is the message of a notice update: its title, then its
// description when it has one.
func noticeText(n *acpwire.Notice) string {
	if n.Description == "" {
		return n.Title
	}
	if n.Title == "" {
		return n.Description
	}
	return n.Title + ": " + n.Description
}
