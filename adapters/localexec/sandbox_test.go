//go:build linux

// The sandbox is built with bubblewrap on Linux only; elsewhere Prepare
// refuses it, which the rows of TestPrepareSandboxRefusals for darwin and
// windows check here with the host's OS injected.

package localexec

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// TestPrepareSandboxRefusals: a sandbox this host cannot build is refused
// at Prepare with agent_not_found (docs/behaviour.md#sandbox): off Linux,
// and without bubblewrap on PATH. Without a sandbox neither is looked at.
func TestPrepareSandboxRefusals(t *testing.T) {
	ws := t.TempDir()
	look := func(bwrap bool) func(string) (string, error) {
		return func(name string) (string, error) {
			if name == "bwrap" && !bwrap {
				return "", errors.New("not found")
			}
			return "/bin/" + name, nil
		}
	}
	cases := []struct {
		name    string
		goos    string
		bwrap   bool
		sandbox bool
		msg     string
	}{
		{name: "darwin", goos: "darwin", bwrap: true, sandbox: true, msg: domain.SandboxUnsupportedMessage("darwin")},
		{name: "windows", goos: "windows", bwrap: true, sandbox: true, msg: domain.SandboxUnsupportedMessage("windows")},
		{name: "no bwrap", goos: "linux", sandbox: true, msg: domain.MsgSandboxNoBwrap},
		{name: "linux with bwrap", goos: "linux", bwrap: true, sandbox: true},
		{name: "no sandbox asked", goos: "darwin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(Options{LookPath: look(c.bwrap)})
			l.goos = c.goos
			p, err := l.Prepare(ports.LaunchRequest{Command: []string{"agent"}, Workspace: ws,
				Sandbox: domain.Sandbox{Enabled: c.sandbox}})
			if c.msg == "" {
				require.NoError(t, err)
				assert.Equal(t, c.sandbox, p.(*plan).sandbox != nil)
				return
			}
			var ae *domain.AgentError
			require.True(t, errors.As(err, &ae), "%v", err)
			assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
			assert.Equal(t, c.msg, ae.Message)
		})
	}
}

// TestSandboxWrap: the command line runs the program under bubblewrap with
// the workspace, the extra directory and the measurement's directory
// writable, and the host's /tmp entries kept.
func TestSandboxWrap(t *testing.T) {
	s := &sandboxPlan{bwrap: "/usr/bin/bwrap", set: domain.Sandbox{Enabled: true, Writable: []string{"/extra"}}}
	measured := t.TempDir()
	path, argv := s.wrap("/bin/agent", []string{"agent", "--flag"}, "/ws", []string{"X=" + measured + "/f"})
	assert.Equal(t, "/bin/sh", path)
	assert.Equal(t, []string{"sh", "-c", domain.SandboxOuterShim, "/usr/bin/bwrap"}, argv[:4])
	assert.Equal(t, []string{"--", "/bin/sh", "-c", domain.SandboxInnerShim, "sh", "/bin/agent", "--flag"}, argv[len(argv)-7:])
	assert.Subset(t, argv, []string{"/extra", "/ws", "--tmpfs", "--unshare-pid", "--die-with-parent"})
	assert.Contains(t, strings.Join(argv, " "), "--bind-try "+domain.SandboxEnvDirs([]string{"X=" + measured}, os.TempDir())[0])
}
