package domain_test

import (
	"fmt"

	"github.com/acpdrive/acpdrive/domain"
)

// ExamplePlanSessionConfig plans the calls that put a session in the mode
// that asks for permission, and shows the refusal of a mode not offered.
func ExamplePlanSessionConfig() {
	offer := domain.SessionOffer{
		Modes: []string{"default", "auto"}, CurrentMode: "auto",
		Options: []domain.OfferedOption{{ID: "mode", Category: "mode", Value: "auto", Values: []string{"default", "auto"}}},
	}
	calls, _ := domain.PlanSessionConfig(domain.SessionConfig{Mode: "default"}, offer)
	for _, c := range calls {
		fmt.Println(c.Via, c.OptionID, c.Value)
	}
	_, err := domain.PlanSessionConfig(domain.SessionConfig{Mode: "yolo"}, offer)
	fmt.Println(err)
	// Output:
	// option mode default
	// agent: agent_not_found: session configuration refused: mode: "yolo" is not offered; the runtime offers default, auto
}
