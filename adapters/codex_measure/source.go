package codex_measure

import (
	"log/slog"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

// Options configures a Source. The zero value is usable.
type Options struct {
	// Logger receives the source's diagnostics. Nil discards them.
	Logger *slog.Logger
	// Home is the CODEX_HOME the runtime uses. Empty means acpdrive's own
	// CODEX_HOME, else ~/.codex (see the package documentation).
	Home string
	// Now is the clock, for the date folders searched first and a
	// continued session's start. Nil means time.Now.
	Now func() time.Time
	// Poll is the interval between reads while TurnUsage waits. Zero
	// means 25 ms.
	Poll time.Duration
}

// Source is the measurement source for codex-acp's rollout files. Its
// Name is "codex_rollout", its RuntimeName "codex-acp" (the agentInfo.name
// codex-acp 0.16 reports); it also recognizes "@agentclientprotocol/codex-acp",
// the name 2.x reports (Recognizes). Claims reports whether the program or
// an argument of command names codex-acp under either package (see the
// package documentation for the rule).
// Arm creates the start's private temporary directory; the measurement
// asks for no environment: CODEX_HOME stays where the runtime's sessions
// are kept (see the package documentation).
type Source struct{ journaltail.Source }

var _ ports.MeasurementSource = (*Source)(nil)

// New returns a Source.
func New(opts Options) *Source {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Source{journaltail.NewSource(journaltail.Spec{
		Adapter: "codex_measure", Name: "codex_rollout", RuntimeName: "codex-acp",
		// 2.x reports its package name; both packages are claimed.
		RuntimeNames: []string{"@agentclientprotocol/codex-acp", "@zed-industries/codex-acp"},
		Package:      "@zed-industries/codex-acp", Packages: []string{"@agentclientprotocol/codex-acp"},
		Bins:      []string{"codex-acp", "codex-acp.js"},
		DirPrefix: "acpdrive-codex-measure-", HomeEnv: "CODEX_HOME", HomeSub: []string{".codex"},
		// No settle rule: a turn ends on its end record, or at the wait's end.
		Poll: 25 * time.Millisecond,
		Open: func(st journaltail.Start) (ports.Measurement, error) {
			return &measurement{st: st, now: now, private: st.Private()}, nil
		},
	}, journaltail.Tuning{Logger: opts.Logger, Home: opts.Home, Poll: opts.Poll})}
}
