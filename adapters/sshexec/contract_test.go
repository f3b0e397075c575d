package sshexec

import (
	"testing"

	"github.com/acpdrive/acpdrive/internal/sshtest"
	"github.com/acpdrive/acpdrive/ports"
)

func TestContract(t *testing.T) {
	sshtest.RunContract(t, func(t *testing.T, srv *sshtest.Server, o sshtest.ContractOptions) ports.Launcher {
		l := New(Options{Host: o.Host, ConfigFile: srv.ConfigFile, StrictHostKeyChecking: o.StrictHostKeyChecking, PassEnv: o.PassEnv, Logger: o.Logger})
		l.preambleCut = o.TruncatePreamble
		return l
	})
}
