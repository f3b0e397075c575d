package config

import yaml "go.yaml.in/yaml/v3"

// protocol reads agent.protocol: 1, 2 (integers or strings) or "auto"
// (docs/behaviour.md#protocol-v2). A value that is none of them is kept
// as written, so domain.Config.Validate refuses it with
// CheckProtocolInvalid.
func (l *loader) protocol(path string, n *yaml.Node) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.ScalarNode {
		l.wrongType(path, n, "1, 2 or \"auto\"")
		return
	}
	l.cfg.Protocol = n.Value
}
