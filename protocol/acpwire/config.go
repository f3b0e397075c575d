package acpwire

import (
	"encoding/json"
	"strconv"
)

// ConfigOption is one session configuration option (config_option_update,
// and the configOptions of session/new). Its value may be a string (a
// select) or a boolean; options may be flat or grouped.
type ConfigOption struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Category     string          `json:"category,omitempty"`
	Type         string          `json:"type,omitempty"`
	CurrentValue json.RawMessage `json:"currentValue,omitempty"`
	Options      json.RawMessage `json:"options,omitempty"`
}

// UnmarshalJSON reads an option under either version's name of its id:
// v1's "id", v2's "configId" (docs/behaviour.md#protocol-v2).
func (o *ConfigOption) UnmarshalJSON(b []byte) error {
	type plain ConfigOption
	var w struct {
		plain
		ConfigID string `json:"configId"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*o = ConfigOption(w.plain)
	if o.ID == "" {
		o.ID = w.ConfigID
	}
	return nil
}

// configValue is one value of a select option, or a group of them.
type configValue struct {
	Value   json.RawMessage `json:"value"`
	Options []configValue   `json:"options"`
}

// Value is the option's current value as text: a string as it is, any
// other JSON value in its compact form, "" when absent.
func (o ConfigOption) Value() string { return scalarText(o.CurrentValue) }

// Values lists the values a select option offers, groups flattened, in
// order; nil when it lists none.
func (o ConfigOption) Values() []string {
	var opts []configValue
	if len(o.Options) == 0 || json.Unmarshal(o.Options, &opts) != nil {
		return nil
	}
	var out []string
	var walk func([]configValue)
	walk = func(vs []configValue) {
		for _, v := range vs {
			if len(v.Value) > 0 {
				out = append(out, scalarText(v.Value))
			}
			walk(v.Options)
		}
	}
	walk(opts)
	return out
}

// scalarText renders a JSON scalar for a person.
func scalarText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return strconv.FormatBool(b)
	}
	var c json.RawMessage
	if json.Unmarshal(raw, &c) == nil {
		return string(c)
	}
	return ""
}
