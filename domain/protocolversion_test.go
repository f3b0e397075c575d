package domain_test

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestUnsupportedProtocolMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		supported []int
		want      string
	}{
		{"none named", nil, "agent does not support protocol version 1"},
		{"one", []int{2}, "agent does not support protocol version 1; it supports 2"},
		{"several", []int{2, 3}, "agent does not support protocol version 1; it supports 2, 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.UnsupportedProtocolMessage(1, c.supported); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
