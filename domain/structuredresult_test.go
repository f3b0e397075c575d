package domain_test

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestReplyJSON(t *testing.T) {
	cases := []struct {
		name, reply, want string
		ok                bool
	}{
		{"fenced", "Done.\n```json\n{\"done\": true}\n```\n", `{"done":true}`, true},
		{"last fence wins", "```json\n{\"a\":1}\n```\nthen\n```json\n{\"a\":2}\n```", `{"a":2}`, true},
		{"fence without info", "```\n{\"a\":1}\n```", `{"a":1}`, true},
		{"bare nested", `I made it: {"a":{"b":1},"c":[1]} ok`, `{"a":{"b":1},"c":[1]}`, true},
		{"last bare", `{"a":1} and {"a":2}`, `{"a":2}`, true},
		{"fence beats bare", "```json\n{\"a\":1}\n```\n{\"a\":2}", `{"a":1}`, true},
		{"none", "no json {here", "", false},
		{"array is not an object", "```json\n[1]\n```", "", false},
	}
	for _, c := range cases {
		got, ok := domain.ReplyJSON(c.reply)
		if ok != c.ok || string(got) != c.want {
			t.Errorf("%s: ReplyJSON = %s, %v; want %s, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
