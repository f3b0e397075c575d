package journaltail_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

func TestCountersUsage(t *testing.T) {
	c := journaltail.Counters{Input: "in", Output: "out", CacheRead: "cached", Total: "total", Model: "model"}
	sum := journaltail.Counters{Input: "in", Output: "out",
		TotalOf: func(u domain.Usage) int64 { return u.InputTokens + u.OutputTokens }}
	cases := []struct {
		name  string
		c     journaltail.Counters
		obj   string
		want  domain.Usage
		model string
		ok    bool
	}{
		{"every counter", c, `{"in":5,"out":2,"cached":1,"total":7,"model":"m","other":"x"}`,
			domain.Usage{InputTokens: 5, OutputTokens: 2, CacheReadTokens: 1, TotalTokens: 8}, "m", true},
		{"no model", c, `{"in":5,"out":2,"cached":1,"total":7}`,
			domain.Usage{InputTokens: 5, OutputTokens: 2, CacheReadTokens: 1, TotalTokens: 8}, "", true},
		{"a counter absent", c, `{"in":5,"out":2,"total":7}`, domain.Usage{}, "", false},
		{"a counter null", c, `{"in":5,"out":2,"cached":null,"total":7}`, domain.Usage{}, "", false},
		{"a counter not an integer", c, `{"in":5,"out":2.5,"cached":1,"total":7}`, domain.Usage{}, "", false},
		{"a counter a string", c, `{"in":"5","out":2,"cached":1,"total":7}`, domain.Usage{}, "", false},
		{"not an object", c, `[1]`, domain.Usage{}, "", false},
		{"null", c, `null`, domain.Usage{}, "", false},
		{"nothing", c, ``, domain.Usage{}, "", false},
		{"a derived total", sum, `{"in":5,"out":2}`, domain.Usage{InputTokens: 5, OutputTokens: 2, TotalTokens: 7}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, model, ok := tc.c.Usage([]byte(tc.obj))
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, u)
			assert.Equal(t, tc.model, model)
		})
	}
}
