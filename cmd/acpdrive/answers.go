package main

import (
	"fmt"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

// answersFlag reads --answers FILE into cfg (docs/behaviour.md#elicitation);
// given, it replaces agent.answers. A file that cannot be read or parsed
// is a mistake in what the person typed.
func answersFlag(cfg *domain.Config, file string) error {
	if file == "" {
		return nil
	}
	a, err := config.LoadAnswers(file)
	if err != nil {
		return fmt.Errorf("--answers: %w", err)
	}
	cfg.Answers = &a
	return nil
}
