//go:build unix

package sshexec

import (
	"testing"

	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/sshcontract"
)

func TestContract(t *testing.T) {
	sshcontract.RunContract(t, func(t *testing.T, srv *sshtest.Server, o sshcontract.ContractOptions) ports.Launcher {
		l := New(Options{Host: o.Host, ConfigFile: srv.ConfigFile, StrictHostKeyChecking: o.StrictHostKeyChecking, PassEnv: o.PassEnv, Logger: o.Logger})
		l.preambleCut = o.TruncatePreamble
		return l
	}, func(hosts []string, launchers []ports.Launcher, perHostCap int) ports.Launcher {
		hl := make([]HostLauncher, len(hosts))
		for i := range hosts {
			hl[i] = HostLauncher{Host: hosts[i], Launcher: launchers[i]}
		}
		return NewPool(hl, perHostCap)
	})
}
