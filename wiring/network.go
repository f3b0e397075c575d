package wiring

import (
	"log/slog"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/ports"
)

// NetworkSettings is how a runtime at a URL is reached
// (docs/behaviour.md#network).
type NetworkSettings struct {
	// URL is the runtime's address: tcp://, unix:, ws://, wss://, http://
	// or https://.
	URL string
	// TokenEnv names the variable holding the bearer token; "" sends none.
	TokenEnv string
	// CAFile is a PEM file of the roots a TLS server is checked against;
	// "" uses the system's.
	CAFile string
	// Refuse, when set, is the error every start through the launcher
	// fails with (a URL given with a command, say), so the start reports
	// it the documented way.
	Refuse error
}

// NewNetworkLauncher is the launcher of a runtime at a URL
// (adapters/netdial). A URL the dialer refuses, or a Refuse error, gives a
// launcher whose every Prepare returns that error.
func NewNetworkLauncher(logger *slog.Logger, s NetworkSettings) ports.Launcher {
	if s.Refuse != nil {
		return refusing{s.Refuse}
	}
	l, err := netdial.New(netdial.Options{URL: s.URL, TokenEnv: s.TokenEnv, CAFile: s.CAFile, Logger: logger})
	if err != nil {
		return refusing{err}
	}
	return l
}

// refusing is a launcher whose every Prepare returns err.
type refusing struct{ err error }

// Prepare refuses.
func (r refusing) Prepare(ports.LaunchRequest) (ports.Plan, error) { return nil, r.err }

// NeedsNoCommand: a refused start never reaches a command.
func (refusing) NeedsNoCommand() bool { return true }
