package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

// TestSandboxArgs: the bubblewrap command line of docs/behaviour.md#sandbox,
// built from resolved paths.
func TestSandboxArgs(t *testing.T) {
	head := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	cases := []struct {
		name string
		l    domain.SandboxLayout
		want []string
	}{
		{
			name: "workspace only",
			l:    domain.SandboxLayout{Workspace: "/w"},
			want: append(append([]string(nil), head...),
				"--bind", "/w", "/w", "--unshare-pid", "--die-with-parent",
				"--setenv", "TMPDIR", "/tmp", "--chdir", "/w", "--"),
		},
		{
			name: "tmp entries kept, state dirs, added dirs, no network",
			l: domain.SandboxLayout{Workspace: "/w", AddDirs: []string{"/a"}, TmpKeep: []string{"/tmp/x"},
				Writable: []string{"/h/.claude"}, Network: domain.SandboxNetNone},
			want: append(append([]string(nil), head...),
				"--ro-bind-try", "/tmp/x", "/tmp/x",
				"--bind-try", "/h/.claude", "/h/.claude", "--bind-try", "/a", "/a",
				"--bind", "/w", "/w", "--unshare-pid", "--die-with-parent", "--unshare-net",
				"--setenv", "TMPDIR", "/tmp", "--chdir", "/w", "--"),
		},
		{
			name: "host network is the default",
			l:    domain.SandboxLayout{Workspace: "/w", Network: domain.SandboxNetHost},
			want: append(append([]string(nil), head...),
				"--bind", "/w", "/w", "--unshare-pid", "--die-with-parent",
				"--setenv", "TMPDIR", "/tmp", "--chdir", "/w", "--"),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, domain.SandboxArgs(c.l))
			h, tl := domain.SandboxArgsParts(c.l)
			assert.Equal(t, head, h)
			assert.Equal(t, c.want[len(c.want)-len(tl):], tl)
		})
	}
}

// TestSandboxKeptTmp: acpdrive's own entries and those holding the
// programs stay; the rest of the host's /tmp is hidden.
func TestSandboxKeptTmp(t *testing.T) {
	got := domain.SandboxKeptTmp([]string{"claude-0", "acpdrive-beacon-1", "codex-daemon-0", "acpdrive-x"},
		[]string{"/tmp/go-build1/b001/app.test", "/usr/bin/node", "/tmp/acpdrive-x/bin/agent", "/tmp/../etc/x"})
	assert.Equal(t, []string{"/tmp/acpdrive-beacon-1", "/tmp/acpdrive-x", "/tmp/go-build1"}, got)
	assert.Empty(t, domain.SandboxKeptTmp(nil, nil))
}

// TestSandboxEnvDirs: the directories acpdrive's own variables point into
// under the temporary directory.
func TestSandboxEnvDirs(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		tmp  string
		want []string
	}{
		{name: "none", env: nil, tmp: "/tmp"},
		{name: "a file below a private dir", env: []string{"OUT=/tmp/acpdrive-x/telemetry.json"}, tmp: "/tmp",
			want: []string{"/tmp/acpdrive-x"}},
		{name: "a dir, twice", env: []string{"A=/tmp/acpdrive-y", "B=/tmp/acpdrive-y/sub"}, tmp: "/tmp/",
			want: []string{"/tmp/acpdrive-y"}},
		{name: "outside, relative, not a path", env: []string{"A=/etc/x", "B=tmp/x", "C=1", "D", "E=/tmp"}, tmp: "/tmp"},
		{name: "dot-dot out", env: []string{"A=/tmp/../etc/passwd"}, tmp: "/tmp"},
		{name: "root temp dir binds nothing", env: []string{"A=/etc/x"}, tmp: "/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, domain.SandboxEnvDirs(c.env, c.tmp))
		})
	}
}

// TestSandboxValidate: the network and the writable entries are checked,
// in settings and in a configuration alike.
func TestSandboxValidate(t *testing.T) {
	ok := domain.Sandbox{Enabled: true, Network: domain.SandboxNetNone, Writable: []string{"/x", "~/y"}}
	assert.Empty(t, ok.Validate())
	assert.Empty(t, domain.Sandbox{}.Validate())
	bad := domain.Sandbox{Network: "lan", Writable: []string{"rel", "~x"}}
	fs := bad.Validate()
	if assert.Len(t, fs, 3) {
		assert.Equal(t, domain.CheckSandboxNetInvalid, fs[0].Check)
		assert.Equal(t, domain.CheckSandboxWritableInvalid, fs[1].Check)
		assert.Equal(t, domain.CheckSandboxWritableInvalid, fs[2].Check)
	}
	set := domain.DefaultSessionSettings()
	set.Sandbox = bad
	assert.Len(t, set.Validate(), 3)
	cfg := domain.DefaultConfig()
	cfg.Command = []string{"x"}
	cfg.Sandbox = bad
	assert.Len(t, cfg.Validate(), 3)
	cfg.Sandbox = ok
	assert.Equal(t, ok, cfg.SessionSettings().Sandbox)
	assert.Equal(t, "/h/y", domain.ExpandHome("~/y", "/h"))
	assert.Equal(t, "/x", domain.ExpandHome("/x", "/h"))
	assert.Contains(t, domain.SandboxUnsupportedMessage("darwin"), "darwin")
}

// TestSandboxCommandPaths: the absolute paths a command line names, also as
// env's NAME=VALUE and inside a shell fragment, are what keeps a /tmp entry
// visible in the sandbox (a runtime installed under /tmp and started
// through env).
func TestSandboxCommandPaths(t *testing.T) {
	got := domain.SandboxCommandPaths([]string{"HOME=/tmp/t1/home", "/tmp/ci/.cache/bin/agent", "--flag", "rel/x",
		"env A=1 '/tmp/frag/run' -v"})
	assert.Equal(t, []string{"/tmp/t1/home", "/tmp/ci/.cache/bin/agent", "/tmp/frag/run"}, got)
	assert.Equal(t, []string{"/tmp/t1", "/tmp/ci", "/tmp/frag"}, domain.SandboxKeptTmp(nil, got))
}
