package config

import (
	"errors"

	yaml "go.yaml.in/yaml/v3"
)

// errNotANumber marks a value fraction refused (already reported).
var errNotANumber = errors.New("not a number")

// fraction reads a non-negative number (agent.max_cost, and with atMostOne
// agent.max_context_fraction, which must not exceed 1).
func (l *loader) fraction(path string, n *yaml.Node, atMostOne bool) (float64, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		var v float64
		if err := n.Decode(&v); err == nil && v >= 0 && (!atMostOne || v <= 1) {
			return v, nil
		}
		if atMostOne {
			l.errorf(CheckOutOfRange, path, n, "%s is not a number from 0 to 1", n.Value)
		} else {
			l.errorf(CheckOutOfRange, path, n, "%s is not a non-negative number", n.Value)
		}
		return 0, errNotANumber
	}
	l.wrongType(path, n, "a number")
	return 0, errNotANumber
}
