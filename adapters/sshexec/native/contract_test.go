//go:build unix

package native_test

import (
	"testing"

	"github.com/acpdrive/acpdrive/adapters/sshexec"
	"github.com/acpdrive/acpdrive/adapters/sshexec/native"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/sshcontract"
)

func TestContract(t *testing.T) {
	sshcontract.RunContract(t, func(t *testing.T, srv *sshtest.Server, o sshcontract.ContractOptions) ports.Launcher {
		l := native.New(native.Options{Host: o.Host, ConfigFile: srv.ConfigFile, StrictHostKeyChecking: o.StrictHostKeyChecking,
			PassEnv: o.PassEnv, Logger: o.Logger, AgentSocket: native.NoAgent})
		native.SetPreambleCut(l, o.TruncatePreamble)
		return l
	}, func(hosts []string, launchers []ports.Launcher, perHostCap int) ports.Launcher {
		hl := make([]sshexec.HostLauncher, len(hosts))
		for i := range hosts {
			hl[i] = sshexec.HostLauncher{Host: hosts[i], Launcher: launchers[i]}
		}
		return sshexec.NewPool(hl, perHostCap)
	})
}
