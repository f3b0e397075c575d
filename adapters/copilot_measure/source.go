package copilot_measure

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

const (
	// SourceName is the source's Name.
	SourceName = "copilot_events"
	// RuntimeName is the agentInfo.name Copilot CLI reports.
	RuntimeName = "Copilot"
)

// Options configure a Source.
type Options struct {
	// Logger receives the source's Debug records; nil discards them.
	Logger *slog.Logger
	// StateDir is Copilot CLI's state directory as the runtime sees it;
	// empty: $HOME/.copilot of this process's environment when Arm runs.
	StateDir string
	// Settle is how long the journal must stay unchanged after a counted
	// record to end a turn that wrote no final reply; zero means 300 ms.
	Settle time.Duration
}

// Source measures Copilot CLI's token usage from its session-state
// journal. It is safe for concurrent use; each Arm is one start. Its Name
// is "copilot_events", its RuntimeName "Copilot"; Claims reports whether a
// word of command names Copilot CLI (see the package documentation for
// the rule). Arm creates the start's private directory and resolves the
// state directory; the measurement carries no environment.
type Source struct{ journaltail.Source }

var _ ports.MeasurementSource = (*Source)(nil)

// New returns the Copilot CLI session-state source.
func New(o Options) *Source {
	return &Source{journaltail.NewSource(journaltail.Spec{
		Adapter: "copilot_measure", Name: SourceName, RuntimeName: RuntimeName,
		Package: "@github/copilot", Bins: []string{"copilot"}, DirPrefix: "acpdrive-copilot-measure-",
		HomeSub: []string{".copilot"},
		Settle:  300 * time.Millisecond, Poll: 10 * time.Millisecond,
		Open: journaltail.Follow(func(state string) journaltail.Journal {
			return events{filepath.Join(state, "session-state")}
		}),
	}, journaltail.Tuning{Logger: o.Logger, Home: o.StateDir, Settle: o.Settle})}
}
