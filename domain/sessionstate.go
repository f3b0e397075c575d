package domain

import (
	"strconv"
	"strings"
)

// CommandsText is the message of a commands_available event: the
// commands' names joined by ", " (cut to MessageCap), or MsgNoCommands.
func CommandsText(cmds []Command) string {
	if len(cmds) == 0 {
		return MsgNoCommands
	}
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name
	}
	return TruncateRunes(strings.Join(names, ", "), MessageCap)
}

// ConfigText is the message of a config_options event: "id=value" per
// option, joined by ", " (cut to MessageCap), or "no options".
func ConfigText(opts []ConfigOption) string {
	if len(opts) == 0 {
		return "no options"
	}
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = o.ID + "=" + o.Value
	}
	return TruncateRunes(strings.Join(parts, ", "), MessageCap)
}

// String renders the context use for a person:
// "3014 of 1000000 context tokens (0.3%), cost 0.0100 USD".
func (c ContextUsage) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatUint(c.Used, 10))
	b.WriteString(" of ")
	b.WriteString(strconv.FormatUint(c.Size, 10))
	b.WriteString(" context tokens")
	if c.Size > 0 {
		b.WriteString(" (")
		b.WriteString(strconv.FormatFloat(float64(c.Used)*100/float64(c.Size), 'f', 1, 64))
		b.WriteString("%)")
	}
	if c.Cost != nil {
		b.WriteString(", cost ")
		b.WriteString(strconv.FormatFloat(c.Cost.Amount, 'f', 4, 64))
		if c.Cost.Currency != "" {
			b.WriteString(" ")
			b.WriteString(c.Cost.Currency)
		}
	}
	return b.String()
}

// AuthStatusText is the message of the runtime notice an authentication
// status becomes: "authentication: <label> (<kind>, <detail>)", the parts
// the runtime left out left out.
func AuthStatusText(kind, label, detail string) string {
	what := label
	if what == "" {
		what = kind
	}
	if what == "" {
		return ""
	}
	var extra []string
	if label != "" && kind != "" {
		extra = append(extra, kind)
	}
	if detail != "" {
		extra = append(extra, detail)
	}
	t := "authentication: " + what
	if len(extra) > 0 {
		t += " (" + strings.Join(extra, ", ") + ")"
	}
	return TruncateRunes(t, MessageCap)
}
