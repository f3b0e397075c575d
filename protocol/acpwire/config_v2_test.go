package acpwire

import (
	"encoding/json"
	"testing"
)

// TestConfigOptionIDOfEitherVersion: v1 names an option's id "id", v2
// "configId"; both decode to ID, and the rest is read the same.
func TestConfigOptionIDOfEitherVersion(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"v1", `{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"auto","options":[{"value":"auto","name":"Auto"},{"value":"default","name":"Default"}]}`},
		{"v2", `{"configId":"mode","name":"Mode","category":"mode","type":"select","currentValue":"auto","options":[{"value":"auto","name":"Auto"},{"value":"default","name":"Default"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o ConfigOption
			if err := json.Unmarshal([]byte(tc.in), &o); err != nil {
				t.Fatal(err)
			}
			if o.ID != "mode" || o.Category != "mode" || o.Value() != "auto" {
				t.Errorf("decoded %+v", o)
			}
			if got := o.Values(); len(got) != 2 || got[1] != "default" {
				t.Errorf("values %v", got)
			}
		})
	}
	var o ConfigOption
	if err := json.Unmarshal([]byte(`{"id":`), &o); err == nil {
		t.Error("a malformed option decoded")
	}
}
