package domain

import (
	"strconv"
	"strings"
)

// UnsupportedProtocolMessage is the operator's message of a start whose
// runtime refused the protocol version this client speaks
// (docs/behaviour.md#start-up-errors): it names the versions the runtime
// says it supports, when it says. The runtime's own answer travels as the
// error's cause.
func UnsupportedProtocolMessage(want int, supported []int) string {
	var b strings.Builder
	b.WriteString("agent does not support protocol version ")
	b.WriteString(strconv.Itoa(want))
	if len(supported) > 0 {
		b.WriteString("; it supports ")
		for i, v := range supported {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(v))
		}
	}
	return b.String()
}
