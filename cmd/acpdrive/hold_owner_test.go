//go:build linux

package main_test

import (
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// otherAccount is the second local account CI creates, or a skip: the
// test must run as root (to act as another user) and the account must
// exist.
func otherAccount(t *testing.T) *user.User {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("acting as another local account needs root (CI runs as root)")
	}
	u, err := user.Lookup(sshtest.RemoteUser)
	if err != nil {
		t.Skipf("no local account %s (.ci/run creates it): %v", sshtest.RemoteUser, err)
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is needed to act as another account")
	}
	return u
}

// publicBinary is a copy of the acpdrive binary another account can run
// (the built one is in a directory of this user's alone).
func publicBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pub")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	b, err := os.ReadFile(testbin.Path(t))
	require.NoError(t, err)
	bin := filepath.Join(dir, "acpdrive")
	require.NoError(t, os.WriteFile(bin, b, 0o755)) //nolint:gosec // another account runs it
	return bin
}

// runAs runs bin as the account u in dir, with env added.
func runAs(t *testing.T, u *user.User, bin, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("setpriv", append([]string{"--reuid=" + u.Uid, "--regid=" + u.Gid, "--init-groups", bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + u.HomeDir}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

// TestHeldOtherAccountRefused: another local account cannot attach to
// a held session: the token file, in this user's 0700 directory, cannot
// be read (port_exit, exit 3); with a token of its own it is refused by
// the holder (for its user); the session stays held for its owner
// (docs/behaviour.md#held-sessions).
func TestHeldOtherAccountRefused(t *testing.T) {
	u := otherAccount(t)
	t.Parallel()
	bin := publicBinary(t)
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	marker := "held-owner-" + strconv.Itoa(os.Getpid())
	ref := killedHeldRun(t, env, marker, "10m")
	t.Cleanup(func() { _, _, _ = runEnv(t, t.TempDir(), env, "release", ref) })

	_, stderr, code := runAs(t, u, bin, "/", nil, "attach", ref, "--json")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "acpdrive attach: port_exit: the held session is gone (its token cannot be read: ")
	assert.Contains(t, stderr, "permission denied")

	// A token file of its own (a guess) is refused by the holder, for its
	// user before its token (TestHeldOtherAccountWithTokenRefused).
	own, err := os.MkdirTemp("", "own")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(own) })
	require.NoError(t, os.Chmod(own, 0o755))
	guess := filepath.Join(own, "token")
	require.NoError(t, os.WriteFile(guess, []byte(strings.Repeat("0", 64)), 0o644)) //nolint:gosec // the other account reads it
	base, frag, _ := strings.Cut(ref, "#")
	v, err := url.ParseQuery(frag)
	require.NoError(t, err)
	v.Set("token_file", guess)
	_, stderr, code = runAs(t, u, bin, "/", nil, "attach", base+"#"+v.Encode(), "--json", "--stall-timeout", "0")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "acpdrive attach: port_exit: ")
	assert.Contains(t, stderr, "could not connect to the runtime's address")
	assert.NotEmpty(t, proctest.WithCmdline(marker), "still held for its owner")

	stdout, stderr, code := runEnv(t, t.TempDir(), env, "attach", ref, "--json")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"outcome":"turn_completed"`)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
}

// TestHeldBaseRefused: a base directory for holders that is not this
// user's own, or not 0700, or not a directory (a symbolic link) is
// refused by run --hold (port_exit, exit 3, no holder started) and by
// held (docs/behaviour.md#held-sessions).
func TestHeldBaseRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(t *testing.T, base string)
	}{
		{"group and others may read it", func(t *testing.T, base string) {
			require.NoError(t, os.Mkdir(base, 0o700))
			require.NoError(t, os.Chmod(base, 0o755))
		}},
		{"a symbolic link to a directory of this user's", func(t *testing.T, base string) {
			target := filepath.Join(filepath.Dir(base), "target")
			require.NoError(t, os.Mkdir(target, 0o700))
			require.NoError(t, os.Symlink(target, base))
		}},
		{"another account's", func(t *testing.T, base string) {
			u := otherAccount(t)
			require.NoError(t, os.Mkdir(base, 0o700))
			uid, err := strconv.Atoi(u.Uid)
			require.NoError(t, err)
			require.NoError(t, os.Lchown(base, uid, -1))
		}},
	}
	bin := testbin.Path(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rt := shortDir(t)
			base := filepath.Join(rt, "acpdrive")
			c.setup(t, base)
			env := []string{"XDG_RUNTIME_DIR=" + rt}
			dir := t.TempDir()
			marker := "held-base-" + strconv.Itoa(os.Getpid())
			_, stderr, code := runEnv(t, dir, env, "run", "--hold", "--command", bin+" agent --agent-name "+marker, "hi")
			assert.Equal(t, 3, code, stderr)
			assert.Contains(t, stderr, "port_exit: the holder could not be started: "+base+" is not a directory of this user's alone (0700)")
			assert.Empty(t, proctest.WithCmdline(marker), "no holder or runtime started")
			_, stderr, code = runEnv(t, dir, env, "held")
			assert.Equal(t, 3, code, stderr)
			assert.Contains(t, stderr, "acpdrive held: "+base+" is not a directory of this user's alone (0700)")
		})
	}
}
