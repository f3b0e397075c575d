package app_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

// wordCounter is a vendor's measurement source: it claims a command whose
// program is "acpdrive-agent", reads the reference agent, and "measures"
// a turn as a fixed figure. A real source reads a file the runtime writes
// into the directory Arm prepared (see adapters/gemini_measure).
type wordCounter struct{}

func (wordCounter) Name() string        { return "word_counter" }
func (wordCounter) RuntimeName() string { return refagent.AgentName }
func (wordCounter) Claims(command []string) bool {
	return len(command) > 0 && strings.HasSuffix(command[0], "acpdrive-agent")
}
func (wordCounter) Arm(context.Context) (ports.Measurement, error) { return wordMeasurement{}, nil }

type wordMeasurement struct{}

func (wordMeasurement) Env() []string              { return []string{"WORD_COUNTER=on"} }
func (wordMeasurement) SessionOpened(string, bool) {}
func (wordMeasurement) Release() error             { return nil }
func (wordMeasurement) TurnUsage(context.Context, string) (domain.Usage, string, bool, error) {
	return domain.Usage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15}, "ref-model", true, nil
}

// ExampleOptions_measurementSources plugs a vendor's measurement source
// into a session through app.Options; nothing in app changes. Each
// measured turn emits token_usage and carries the figures on its result.
func ExampleOptions_measurementSources() {
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"acpdrive-agent"}
	sess, err := app.Start(context.Background(), app.Options{
		Settings:           cfg,
		Workspace:          "/",
		Launcher:           inprocess.New("--scenario", "echo"),
		Clock:              sysclock.Clock{},
		MeasurementSources: []ports.MeasurementSource{wordCounter{}},
		OnEvent: func(ev domain.Event) {
			if ev.Type == domain.EventTokenUsage {
				fmt.Printf("token_usage: %d in, %d out, %d total (%s)\n", ev.Usage.InputTokens, ev.Usage.OutputTokens, ev.Usage.TotalTokens, ev.Model)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()
	fmt.Println("token counts:", sess.Capabilities().State(domain.CapTokenCounts))
	res := sess.Turn(context.Background(), "hello")
	fmt.Println("turn:", res.Outcome, "total", res.Usage.TotalTokens)
	// Output:
	// token counts: ours
	// token_usage: 12 in, 3 out, 15 total (ref-model)
	// turn: turn_completed total 15
}
