//go:build unix

package native_test

import (
	"testing"

	"github.com/acpdrive/acpdrive/adapters/sshexec/native"
	"github.com/acpdrive/acpdrive/internal/sshtest"
	"github.com/acpdrive/acpdrive/ports"
)

func TestContract(t *testing.T) {
	sshtest.RunContract(t, func(t *testing.T, srv *sshtest.Server, o sshtest.ContractOptions) ports.Launcher {
		l := native.New(native.Options{Host: o.Host, ConfigFile: srv.ConfigFile, StrictHostKeyChecking: o.StrictHostKeyChecking,
			PassEnv: o.PassEnv, Logger: o.Logger, AgentSocket: native.NoAgent})
		native.SetPreambleCut(l, o.TruncatePreamble)
		return l
	})
}
