package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/adapters/netserve"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestSessionOnARuntimeAtAURL: a library program reaches a runtime at a
// URL with netdial as its launcher and no command, over each transport
// acpdrive serve offers, and gets the turn a local process gives
// (docs/behaviour.md#network).
func TestSessionOnARuntimeAtAURL(t *testing.T) {
	t.Parallel()
	for _, listen := range []string{"tcp://127.0.0.1:0", "unix:" + filepath.Join(t.TempDir(), "acp.sock"), "http://127.0.0.1:0"} {
		scheme, _, _ := strings.Cut(listen, ":")
		t.Run(scheme, func(t *testing.T) {
			srv, err := netserve.Listen(netserve.Options{Listen: listen, Workspace: t.TempDir(),
				Command: []string{testbin.Path(t), "agent"}, Launcher: localexec.New(localexec.Options{})})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ctx) }()
			t.Cleanup(func() {
				cancel()
				assert.NoError(t, <-served)
			})
			urls := []string{srv.URL()}
			if scheme == "http" {
				urls = append(urls, "ws"+srv.URL()[len("http"):])
			}
			for _, url := range urls {
				l, err := netdial.New(netdial.Options{URL: url})
				require.NoError(t, err)
				o, rec, logs := baseOptions(t)
				o.Launcher = l
				o.Settings.Command = nil // the launcher needs none
				o.Workspace = t.TempDir()
				h := startWith(t, o, rec, logs, "")
				res := h.turn("hello over the network")
				require.Equal(t, domain.OutcomeCompleted, res.Outcome, "%s: %s", url, res.Message())
				assert.Contains(t, res.Reply, "hello over the network", url)
				h.stop()
			}
		})
	}
}
