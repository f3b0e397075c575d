package config

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/acpdrive/acpdrive/domain"
)

// answers reads agent.answers: the answers FILE (docs/behaviour.md#elicitation),
// relative to the WORKFLOW.md directory; a file that cannot be read or
// parsed is a finding.
func (l *loader) answers(path string, n *yaml.Node) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if !isString(n) || n.Value == "" {
		l.wrongType(path, n, "a string (the answers file)")
		return
	}
	a, err := LoadAnswers(l.resolvePath(n.Value))
	if err != nil {
		l.errorf(domain.CheckAnswersInvalid, path, n, "%v", err)
		return
	}
	l.cfg.Answers = &a
}

// LoadAnswers reads and parses an answers file (docs/behaviour.md#elicitation),
// bounded like every file the configuration names.
func LoadAnswers(file string) (domain.Answers, error) {
	data, tooLarge, err := readBounded(file)
	switch {
	case err != nil:
		return domain.Answers{}, err
	case tooLarge:
		return domain.Answers{}, fmt.Errorf("%s: the file is too large", file)
	}
	a, err := domain.ParseAnswers(data)
	if err != nil {
		return domain.Answers{}, fmt.Errorf("%s: %w", file, err)
	}
	return a, nil
}
