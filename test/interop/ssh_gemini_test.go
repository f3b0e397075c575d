//go:build interop && unix

package interop

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/gemini_measure"
	"github.com/acpdrive/acpdrive/adapters/sshexec"
	"github.com/acpdrive/acpdrive/adapters/sshexec/native"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Gemini CLI on the "remote host": a real sshd on 127.0.0.1 whose account
// is the second local user (internal/testsupport/sshtest), reached through both SSH
// transports. The runtime's tree is copied into a directory that user
// owns; its HOME (with the API-key settings) and workspace are that
// user's too. A remote launch carries no configured environment, so the
// API key and the fake server's URL travel through worker.ssh_pass_env
// (the stdin preamble); the rest is written into agent.command, a shell
// fragment the remote shell runs.

// sshGeminiKey is the API key only the preamble carries.
const sshGeminiKey = "acpd-ssh-gemini-key-7d41c0aa"

// sshGeminiPassEnv are the variables forwarded to the remote runtime.
var sshGeminiPassEnv = []string{"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"}

// The two turns: each prompt is distinct, so a model call is told by the
// prompt it carries (the second call's history also holds the first).
var sshGeminiTurns = []struct{ prompt, reply string }{
	{"ssh turn one: say hello", "Hello from the fake Gemini over SSH."},
	{"ssh turn two: say it again", "Hello again, still over SSH."},
}

func TestSSHGemini(t *testing.T) {
	// Not parallel: it sets the test process's environment (t.Setenv: the launcher forwards GEMINI_API_KEY and the fake's URL from it), which a parallel test must not see.
	nodePath(t)
	local := locate(t, "gemini", "gemini/node_modules/@google/gemini-cli/bundle/gemini.js")
	srv := sshtest.Start(t)
	uid, gid := remoteIDs(t, srv)

	// The runtime's package tree, owned by the remote user, 0755
	// directories along the way (srv.Dir is 0755).
	tree := filepath.Join(srv.Dir, "gemini")
	src := runtimePath("gemini")
	t0 := time.Now()
	copyTree(t, src, tree, uid, gid)
	t.Logf("copied the Gemini CLI tree for %s in %s", srv.User, time.Since(t0).Round(time.Millisecond))
	rel, err := filepath.Rel(src, local)
	require.NoError(t, err)
	entry := filepath.Join(tree, rel)

	for _, transport := range []string{"openssh", "native"} {
		t.Run(transport, func(t *testing.T) {
			newLauncher := func(logger *slog.Logger) ports.Launcher {
				if transport == "native" {
					return native.New(native.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile,
						PassEnv: sshGeminiPassEnv, Logger: logger, AgentSocket: native.NoAgent})
				}
				return sshexec.New(sshexec.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile,
					StrictHostKeyChecking: domain.StrictHostKeyAcceptNew, PassEnv: sshGeminiPassEnv, Logger: logger})
			}
			sshGeminiSession(t, srv, entry, uid, gid, newLauncher)
		})
	}
}

// sshGeminiSession runs one remote Gemini CLI session of two turns through
// the launcher newLauncher makes, and checks what reached the model, the
// capability record, the argv of every process, and that nothing
// survives the stop on either side.
func sshGeminiSession(t *testing.T, srv *sshtest.Server, entry string, uid, gid int, newLauncher func(*slog.Logger) ports.Launcher) {
	fake := fakes.NewGemini()
	t.Cleanup(fake.Close)
	fake.Script(
		fakes.TextReply(fakes.Usage{Input: 110, Output: 9}, "Hello from ", "the fake Gemini ", "over SSH."),
		fakes.TextReply(fakes.Usage{Input: 150, Output: 6}, "Hello again, ", "still over SSH."),
	)
	// The values exist only in this process's environment; the launcher
	// reads them at each start.
	t.Setenv("GEMINI_API_KEY", sshGeminiKey)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())

	// The remote HOME and workspace, the remote user's own.
	base, err := os.MkdirTemp(srv.Dir, "gemini-"+filepath.Base(t.Name())+"-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	home := filepath.Join(base, "home")
	workspace := filepath.Join(base, "workspace")
	// API-key authentication selected explicitly (GOOGLE_GEMINI_BASE_URL
	// alone picks the "gateway" method); telemetry and usage statistics
	// off: the suite talks to 127.0.0.1 only.
	writeFile(t, filepath.Join(home, ".gemini", "settings.json"),
		`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}`)
	require.NoError(t, os.MkdirAll(workspace, 0o755))
	chownTree(t, base, uid, gid)

	// The rig gives the recorders, the wire tap and the failure dump; the
	// session is built here, not by rig.options (a local launcher).
	r := newRig(t)
	r.rec.Normalize = func(s string) string { return strings.ReplaceAll(s, base, "<remote>") }
	logger := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	cfg := domain.DefaultSessionSettings()
	// The command the remote shell runs: what the local rig puts in the
	// runtime's environment (no value here is a secret) set through env,
	// then the runtime on the remote PATH's node. Plain words only: the
	// native transport passes the first word as the shell fragment and
	// single-quotes the others, where the ssh binary's rejoins them all
	// (remotecmd.JoinFragment), so a second assignment word or an operator
	// would not read the same on both.
	cfg.Command = []string{
		"env",
		"HOME=" + home,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_CLI_NO_RELAUNCH=true",
		"node", entry, "--acp", "-m", geminiModel,
	}
	cfg.Hosts = []string{srv.Alias}
	cfg.ReadTimeout = 30 * time.Second
	cfg.StopGrace = 5 * time.Second
	cfg.StallTimeout = 0
	cfg.TurnTimeout = 3 * time.Minute

	// An MCP configuration a local launch would read, and a source that
	// fails the test if it is read at all.
	mcpPath := filepath.Join(t.TempDir(), "mcp.json")
	writeFile(t, mcpPath, `{"mcpServers":{"docs":{"command":"docs-server","args":["--stdio"]}}}`)
	var mcpOnce sync.Once

	var textMu sync.Mutex
	var text strings.Builder
	agentText := func() string {
		textMu.Lock()
		defer textMu.Unlock()
		s := text.String()
		text.Reset()
		return s
	}

	cfg.MCPConfigPath = mcpPath
	opts := app.Options{
		Settings:  cfg,
		Workspace: workspace,
		Launcher:  &tapLauncher{inner: newLauncher(logger), wire: r.wire},
		Clock:     sysclock.Clock{},
		Creations: r.creations,
		Logger:    logger,
		OnEvent:   r.rec.Add,
		MCPSource: sshFailingMCP{t: t, once: &mcpOnce},
		// The Gemini source would claim a local launch of this command; a
		// remote one it must not.
		MeasurementSources: []ports.MeasurementSource{gemini_measure.New(gemini_measure.Options{
			Logger:  logger.With("component", "gemini_measure"),
			Home:    home,
			TempDir: t.TempDir(),
		})},
		OnAgentText: func(_, s string) {
			textMu.Lock()
			text.WriteString(s)
			textMu.Unlock()
		},
	}

	startCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t0 := time.Now()
	sess, err := app.Start(startCtx, opts)
	cancel()
	require.NoError(t, err, "sshd log:\n%s", srv.Log())
	tookStart := time.Since(t0)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = sess.Stop(context.Background())
		}
	})

	id := sess.Identity()
	assert.Equal(t, srv.Alias, id.Host)
	agentIs(t, sess, "gemini-cli", "0.61.0")
	caps := sess.Capabilities()
	assert.Equal(t, domain.CapGap, caps.State(domain.CapToolServers), "a remote launch delivers no MCP servers")
	assert.Equal(t, domain.CapGap, caps.State(domain.CapTokenCounts), "a remote launch is measured by no source")
	assert.Equal(t, []domain.CapabilityLabel{domain.CapToolServers, domain.CapTokenCounts}, caps.Gaps())

	// The runtime runs as the remote user, and no argv anywhere holds a
	// forwarded value.
	procs := srv.RemoteProcs(t)
	assert.True(t, hasProc(procs, entry), "Gemini CLI is not among the remote user's processes: %v", procs)
	noValueOnArgv(t, "after start", fake.URL())

	var tookTurns []time.Duration
	for i, turn := range sshGeminiTurns {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		t0 := time.Now()
		res := sess.Turn(ctx, turn.prompt)
		cancel()
		tookTurns = append(tookTurns, time.Since(t0))
		assert.Equal(t, completed, outcomeOf(res), "turn %d", i+1)
		assert.Equal(t, turn.reply, agentText(), "turn %d's agent text", i+1)
		assert.Nil(t, res.Usage, "turn %d: a remote turn is not measured", i+1)
	}
	noValueOnArgv(t, "after the turns", fake.URL())

	// Stop: the local relay (openssh) and everything of the remote user go.
	relay := id.PID
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t0 = time.Now()
	require.NoError(t, sess.Stop(stopCtx))
	cancel()
	tookStop := time.Since(t0)
	stopped = true
	t0 = time.Now()
	if left := srv.WaitNoRemoteProcs(t, 15*time.Second); len(left) > 0 {
		t.Errorf("remote survivors after Stop: %v", left)
	}
	tookRemote := time.Since(t0)
	noLocalSSH(t, srv, relay)
	t.Logf("start %s, turns %s and %s, stop %s, remote side empty %s later",
		tookStart.Round(time.Millisecond), tookTurns[0].Round(time.Millisecond), tookTurns[1].Round(time.Millisecond),
		tookStop.Round(time.Millisecond), tookRemote.Round(time.Millisecond))

	// The model saw the two prompts, one call each, with the forwarded
	// key; Gemini's side calls (none expected with a pinned model) carry
	// no prompt and are not counted.
	var prompted []fakes.Request
	for _, req := range fake.Requests() {
		if req.BodyContains(sshGeminiTurns[0].prompt) || req.BodyContains(sshGeminiTurns[1].prompt) {
			prompted = append(prompted, req)
		}
	}
	require.Len(t, prompted, 2, fake.Describe())
	t.Logf("the fake server saw %d requests, %d of them carrying a prompt", len(fake.Requests()), len(prompted))
	assert.False(t, prompted[0].BodyContains(sshGeminiTurns[1].prompt), "the first call is the first turn's")
	assert.True(t, prompted[1].BodyContains(sshGeminiTurns[1].prompt), "the second call is the second turn's")
	assert.True(t, prompted[1].BodyContains(sshGeminiTurns[0].reply), "the second call holds the first reply as history")
	for i, req := range prompted {
		assert.True(t, req.Scripted, "call %d got a scripted reply", i+1)
		assert.Equal(t, "/v1beta/models/"+geminiModel+":streamGenerateContent", req.Path, "call %d", i+1)
		assert.Equal(t, sshGeminiKey, req.Header.Get("x-goog-api-key"), "call %d: the key came through the preamble", i+1)
	}
	assert.Equal(t, 0, fake.Unscripted(), fake.Describe())

	// session/new declared no servers although a configuration was named.
	var newParams string
	for _, m := range r.wire.messages() {
		if m.Out && m.Method == "session/new" {
			newParams = string(m.Params)
		}
	}
	assert.Contains(t, newParams, `"mcpServers":[]`)
	assert.NotContains(t, newParams, "docs-server")

	// The events: the gap notice names both labels; each turn ends with the
	// fake's reply.
	want := textTurn(gapNotice(domain.CapToolServers, domain.CapTokenCounts), sshGeminiTurns[0].reply)
	want = append(want, started, keepAlive, "notification:"+sshGeminiTurns[1].reply, "turn_completed")
	assertShape(t, want, r.shape())

	// No forwarded value in acpdrive's log either.
	logs := r.logs.String()
	assert.NotContains(t, logs, sshGeminiKey)
	assert.NotContains(t, logs, fake.URL())
}

// remoteIDs returns the remote account's user and group IDs.
func remoteIDs(t *testing.T, srv *sshtest.Server) (uid, gid int) {
	t.Helper()
	u, err := user.Lookup(srv.User)
	require.NoError(t, err)
	uid, err = strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err = strconv.Atoi(u.Gid)
	require.NoError(t, err)
	return uid, gid
}

// copyTree copies the directory src to dst (symbolic links as links) and
// gives the copy to uid:gid, directories 0755 and files readable by all.
func copyTree(t *testing.T, src, dst string, uid, gid int) {
	t.Helper()
	out, err := exec.Command("cp", "-R", "--no-preserve=ownership", src, dst).CombinedOutput()
	require.NoError(t, err, "cp: %s", out)
	require.NoError(t, filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			return os.Lchown(p, uid, gid)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode().Perm() | 0o444
		if d.IsDir() || info.Mode().Perm()&0o100 != 0 {
			mode |= 0o555
		}
		if d.IsDir() {
			mode = 0o755
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}))
}

// chownTree gives every entry under root to uid:gid.
func chownTree(t *testing.T, root string, uid, gid int) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}))
}

// hasProc reports whether a process's argv mentions s.
func hasProc(procs []sshtest.Proc, s string) bool {
	for _, p := range procs {
		if strings.Contains(p.Cmdline, s) {
			return true
		}
	}
	return false
}

// noValueOnArgv checks that no process on this machine (the local ssh,
// the remote sshd session, the remote shell, the runtime) has the key or
// the URL worker.ssh_pass_env forwards on its argument list.
func noValueOnArgv(t *testing.T, when, url string) {
	t.Helper()
	for pid, argv := range sshtest.Cmdlines() {
		for _, v := range []string{sshGeminiKey, url} {
			if bytes.Contains(argv, []byte(v)) {
				t.Errorf("%s: %q is on the argv of %d: %q", when, v, pid, argv)
			}
		}
	}
}

// noLocalSSH checks that the relay (0 or less: none, the native
// transport) is gone and that no ssh client of this fixture's config
// runs.
func noLocalSSH(t *testing.T, srv *sshtest.Server, relay int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var alive []string
		if relay > 0 && syscall.Kill(relay, 0) == nil && !zombie(relay) {
			alive = append(alive, "relay "+strconv.Itoa(relay))
		}
		for pid, argv := range sshtest.Cmdlines() {
			args := strings.Split(strings.TrimRight(string(argv), "\x00"), "\x00")
			if filepath.Base(args[0]) == "ssh" && bytes.Contains(argv, []byte(srv.ConfigFile)) && !zombie(pid) {
				alive = append(alive, strconv.Itoa(pid)+": "+strings.Join(args, " "))
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("local ssh survived the stop: %v", alive)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i >= 0 && bytes.HasPrefix(data[i+1:], []byte(" Z"))
}

// sshFailingMCP is an MCP source a remote launch must never read.
type sshFailingMCP struct {
	t    *testing.T
	once *sync.Once
}

func (s sshFailingMCP) Load(context.Context, string) ([]domain.MCPServer, error) {
	s.once.Do(func() { s.t.Error("a remote launch read the MCP configuration") })
	return nil, errors.New("not for a remote launch")
}
