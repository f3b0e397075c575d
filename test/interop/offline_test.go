//go:build interop

package interop

import (
	"net"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/test/fakes"
)

// TestOfflineProofFails: the offline proof can fail. Inside a fresh
// namespace, a DNS lookup of a host name and a TCP connect to an address
// off loopback each leave through the counted way out, and a connect to
// the forwarded fake server on 127.0.0.1 does not.
func TestOfflineProofFails(t *testing.T) {
	t.Parallel()
	ns := newNetNamespace(t)
	srv := fakes.NewChat()
	t.Cleanup(srv.Close)
	addr := srv.URL()[len("http://"):]
	ns.forward(t, addr)

	inside := func(args ...string) error {
		return exec.Command(ns.prefix()[0], append(append(ns.prefix()[1:], "timeout", "3"), args...)...).Run()
	}
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	require.NoError(t, inside("bash", "-c", "exec 3<>/dev/tcp/"+host+"/"+port+" && printf 'GET /v1/models HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3 >/dev/null"),
		"the forwarded fake server answers on 127.0.0.1 inside the namespace")
	require.Len(t, srv.Requests(), 1)
	assert.Zero(t, ns.transmitted(t), "loopback traffic is not counted")

	_ = inside("getent", "hosts", "telemetry.example")
	afterDNS := ns.transmitted(t)
	assert.Positive(t, afterDNS, "a DNS lookup leaves through the way out")

	_ = inside("bash", "-c", "exec 3<>/dev/tcp/192.0.2.1/443")
	assert.Greater(t, ns.transmitted(t), afterDNS, "a connect off loopback leaves through the way out")
}

// TestOfflineExistingRuntimes: the runtimes of the other interop tests
// (whose settings keep them on 127.0.0.1) run a text turn in a namespace
// of their own, sending nothing anywhere else. The Chat Completions
// runtimes (Qwen Code, opencode, Copilot CLI) run every test offline.
func TestOfflineExistingRuntimes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		rig   func(t *testing.T) (*rig, *fakes.Server)
		reply fakes.Reply
	}{
		{"gemini", func(t *testing.T) (*rig, *fakes.Server) { return geminiRig(t, true) }, fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Offline.")},
		{"claude", claudeRig, fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Offline.")},
		{"codex", codexRig, fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Offline.")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, srv := c.rig(t)
			r.offline()
			srv.Script(c.reply)
			sess := r.mustStart()
			assert.Equal(t, completed, outcomeOf(r.turn(sess, "say offline")))
			r.stop(sess)
			assert.Equal(t, "Offline.", sess.LastMessage().Text)
			// The namespace's counter is checked at cleanup.
		})
	}
}
