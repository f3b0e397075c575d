//go:build linux

package main_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
)

// TestHeldOtherAccountWithTokenRefused: another local account holding a
// copy of the right token is still refused by the holder, because of its
// user (port_exit, exit 3, nothing of the session read); the holder logs
// the refusal and the session stays held for its owner
// (docs/behaviour.md#held-sessions).
func TestHeldOtherAccountWithTokenRefused(t *testing.T) {
	u := otherAccount(t)
	t.Parallel()
	bin := publicBinary(t)
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	marker := "held-peer-" + strconv.Itoa(os.Getpid())
	ref := killedHeldRun(t, env, marker, "10m")
	t.Cleanup(func() { _, _, _ = runEnv(t, t.TempDir(), env, "release", ref) })

	base, frag, _ := strings.Cut(ref, "#")
	v, err := url.ParseQuery(frag)
	require.NoError(t, err)
	holderDir := filepath.Dir(v.Get("token_file"))
	token, err := os.ReadFile(v.Get("token_file"))
	require.NoError(t, err)
	own, err := os.MkdirTemp("", "own")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(own) })
	require.NoError(t, os.Chmod(own, 0o755))
	copied := filepath.Join(own, "token")
	require.NoError(t, os.WriteFile(copied, token, 0o644)) //nolint:gosec // the other account reads it
	v.Set("token_file", copied)

	stdout, stderr, code := runAs(t, u, bin, "/", nil, "attach", base+"#"+v.Encode(), "--json", "--stall-timeout", "0")
	assert.Equal(t, 3, code, stderr)
	assert.True(t, strings.HasPrefix(stderr, "acpdrive attach: port_exit: "), stderr)
	assert.Contains(t, stderr, "could not connect to the runtime's address "+base+": ")
	assert.NotContains(t, stdout, `"type":"session_started"`, "nothing of the session is read")
	log, err := os.ReadFile(filepath.Join(holderDir, "holder.log"))
	require.NoError(t, err)
	assert.Contains(t, string(log), `msg="refused a connection of another user"`)
	assert.Contains(t, string(log), "peer_uid="+u.Uid)
	assert.NotContains(t, string(log), strings.TrimSpace(string(token)), "the log never holds the token")
	assert.NotEmpty(t, proctest.WithCmdline(marker), "still held for its owner")

	stdout, stderr, code = runEnv(t, t.TempDir(), env, "attach", ref, "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"outcome":"turn_completed"`)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
}
