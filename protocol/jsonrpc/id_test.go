package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestIDJSON(t *testing.T) {
	tests := []struct {
		in     string
		out    string // MarshalJSON after UnmarshalJSON
		want   ID
		bad    bool
		isNull bool
	}{
		{in: `0`, out: `0`, want: IntID(0)},
		{in: `-1`, out: `-1`, want: IntID(-1)},
		{in: `9223372036854775807`, out: `9223372036854775807`, want: IntID(1<<63 - 1)},
		{in: `99999999999999999999999`, out: `99999999999999999999999`},
		{in: `"0"`, out: `"0"`, want: StringID("0")},
		{in: `"x\u0041"`, out: `"xA"`, want: StringID("xA")},
		{in: ` 7 `, out: `7`, want: IntID(7)},
		{in: `null`, out: `null`, isNull: true},
		{in: `-0`, out: `-0`},
		{in: `1.5`, out: `1.5`},
		{in: `1e3`, out: `1e3`},
		{in: `-0.0`, out: `-0.0`},
		{in: `2.50E-7`, out: `2.50E-7`},
		{in: `1e400`, out: `1e400`},
		{in: `01`, bad: true},
		{in: `1.`, bad: true},
		{in: `.5`, bad: true},
		{in: `1e`, bad: true},
		{in: `+1`, bad: true},
		{in: `1 2`, bad: true},
		{in: `-`, bad: true},
		{in: `true`, bad: true},
		{in: `{}`, bad: true},
		{in: `[]`, bad: true},
		{in: `"unterminated`, bad: true},
		{in: ``, bad: true},
		{in: `nul`, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var id ID
			err := id.UnmarshalJSON([]byte(tt.in))
			if tt.bad {
				if err == nil {
					t.Fatalf("UnmarshalJSON(%s) = %s, want error", tt.in, id)
				}
				return
			}
			if err != nil {
				t.Fatalf("UnmarshalJSON(%s): %v", tt.in, err)
			}
			out, _ := id.MarshalJSON()
			if string(out) != tt.out || id.String() != tt.out {
				t.Errorf("MarshalJSON = %s, String = %s, want %s", out, id, tt.out)
			}
			if id.IsNull() != tt.isNull {
				t.Errorf("IsNull = %v", id.IsNull())
			}
			if tt.want != (ID{}) && id != tt.want {
				t.Errorf("id %s != %s", id, tt.want)
			}
		})
	}
}

func TestIDFormsDiffer(t *testing.T) {
	if IntID(0) == StringID("0") {
		t.Error(`IntID(0) == StringID("0")`)
	}
	if IntID(0).String() != "0" || StringID("0").String() != `"0"` || (ID{}).String() != "null" {
		t.Errorf("String forms: %s %s %s", IntID(0), StringID("0"), ID{})
	}
	// Inside a struct through encoding/json.
	var v struct{ IDs []ID }
	if err := json.Unmarshal([]byte(`{"IDs":[0,"0",null,-5]}`), &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil || string(out) != `{"IDs":[0,"0",null,-5]}` {
		t.Errorf("round trip = %s, %v", out, err)
	}
}

func TestParseInt64(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"42", 42, true},
		{"-9223372036854775808", -1 << 63, true},
		{"9223372036854775807", 1<<63 - 1, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false},
		{"1.0", 0, false},
		{`"1"`, 0, false},
		{"null", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseInt64([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseInt64(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
