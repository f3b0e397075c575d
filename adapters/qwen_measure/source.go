package qwen_measure

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

const (
	// SourceName is the source's Name.
	SourceName = "qwen_chats"
	// RuntimeName is the agentInfo.name Qwen Code reports.
	RuntimeName = "qwen-code"
)

// Options configure a Source.
type Options struct {
	// Logger receives the source's Debug records; nil discards them.
	Logger *slog.Logger
	// Home is the HOME the runtime sees; empty: this process's home
	// directory when Arm runs.
	Home string
	// Settle is how long the journal must stay unchanged after a counted
	// record to end a turn that wrote no checkpoint; zero means 300 ms.
	Settle time.Duration
}

// Source measures Qwen Code's token usage from its chats journal. It is
// safe for concurrent use; each Arm is one start. Its Name is
// "qwen_chats", its RuntimeName "qwen-code"; Claims reports whether a word
// of command names Qwen Code (see the package documentation for the rule).
// Arm creates the start's private directory and resolves the home the
// journal is under; the measurement carries no environment.
type Source struct{ journaltail.Source }

var _ ports.MeasurementSource = (*Source)(nil)

// New returns the Qwen Code chats source.
func New(o Options) *Source {
	return &Source{journaltail.NewSource(journaltail.Spec{
		Adapter: "qwen_measure", Name: SourceName, RuntimeName: RuntimeName,
		Package: "@qwen-code/qwen-code", Bins: []string{"qwen"}, DirPrefix: "acpdrive-qwen-measure-",
		Settle: 300 * time.Millisecond, Poll: 10 * time.Millisecond,
		Open: journaltail.Follow(func(home string) journaltail.Journal {
			return chats{filepath.Join(home, ".qwen", "projects")}
		}),
	}, journaltail.Tuning{Logger: o.Logger, Home: o.Home, Settle: o.Settle})}
}
