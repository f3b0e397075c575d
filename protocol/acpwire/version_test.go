package acpwire_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

func TestSupportedVersions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		data string
		want []int
		ok   bool
	}{
		{`{"requested":1,"supported":[2]}`, []int{2}, true},
		{`{"supported":[2,3]}`, []int{2, 3}, true},
		{`{"supported":[]}`, nil, false},
		{`{"requested":1}`, nil, false},
		{`"text"`, nil, false},
		{``, nil, false},
	}
	for _, c := range cases {
		got, ok := acpwire.SupportedVersions(json.RawMessage(c.data))
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("SupportedVersions(%s) = %v, %v; want %v, %v", c.data, got, ok, c.want, c.ok)
		}
	}
}
