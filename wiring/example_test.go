package wiring_test

import (
	"context"
	"fmt"
	"sort"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/wiring"
)

// acmeSource is a vendor's measurement source for a runtime named
// "acme-agent".
type acmeSource struct{}

func (acmeSource) Name() string                 { return "acme_usage" }
func (acmeSource) RuntimeName() string          { return "acme-agent" }
func (acmeSource) Claims(command []string) bool { return len(command) > 0 && command[0] == "acme" }
func (acmeSource) Arm(context.Context) (ports.Measurement, error) {
	return nil, fmt.Errorf("not in this example")
}

// ExampleMeasurementSource adds a vendor's source to the fx value group
// "measurement_sources" beside the five acpdrive ships; Deps.Apply hands
// them all to app.Options.
func ExampleMeasurementSource() {
	deps, err := wiring.Resolve(nil, wiring.LocalSettings{},
		wiring.MeasurementSource(func() acmeSource { return acmeSource{} }))
	if err != nil {
		fmt.Println(err)
		return
	}
	var names []string
	for _, s := range deps.MeasurementSources {
		names = append(names, s.Name())
	}
	sort.Strings(names)
	fmt.Println(names)
	_ = domain.Usage{}
	// Output:
	// [acme_usage claude_transcript codex_rollout copilot_events gemini_telemetry qwen_chats]
}
