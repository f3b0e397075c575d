//go:build unix

package remotecmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// hostile are values a shell would expand, split or end a quote on.
var hostile = []string{
	"",
	"plain",
	"it's",
	"'",
	"''''",
	`"double"`,
	"$(touch pwned)",
	"`touch pwned`",
	"${HOME}",
	"$HOME",
	"a\nb\nc",
	"\n",
	`back\slash\`,
	"semi; exit 3",
	"tab\there",
	"* ? [a-z]",
	"# not a comment",
	"\n" + PreambleSentinel + "\n",
	"'; touch pwned; '",
	"ünïcødé",
}

// runSh runs script with /bin/sh in a process group of its own (the
// remote command signals its own group) in dir, with stdin, and returns
// stdout, stderr and the exit code.
func runSh(t *testing.T, dir, script string, stdin []byte, env []string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run sh: %v", err)
	}
	return out.String(), errb.String(), code
}

func TestShellQuoteIsLiteral(t *testing.T) {
	dir := t.TempDir()
	for _, v := range hostile {
		out, stderr, code := runSh(t, dir, "printf '%s' "+ShellQuote(v), nil, nil)
		if code != 0 || out != v {
			t.Errorf("ShellQuote(%q): sh printed %q (stderr %q, exit %d)", v, out, stderr, code)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("a quoted value was executed")
	}
}

func TestPassEnvValues(t *testing.T) {
	env := map[string]string{"A": "1", "B": "", "C": "x'y"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name  string
		names []string
		want  []domain.NameValue
	}{
		{"none", nil, nil},
		{"set and empty", []string{"A", "B"}, []domain.NameValue{{Name: "A", Value: "1"}, {Name: "B", Value: ""}}},
		{"unset left out", []string{"Z", "C"}, []domain.NameValue{{Name: "C", Value: "x'y"}}},
		{"invalid names left out", []string{"1A", "A-B", "", "A B", "A"}, []domain.NameValue{{Name: "A", Value: "1"}}},
		{"repeats once", []string{"A", "A"}, []domain.NameValue{{Name: "A", Value: "1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PassEnvValues(tt.names, lookup)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestPreambleShape(t *testing.T) {
	tests := []struct {
		vars []domain.NameValue
		want string
	}{
		{nil, PreambleSentinel + "\n"},
		{[]domain.NameValue{{Name: "A", Value: "it's"}}, "export A='it'\\''s'\n" + PreambleSentinel + "\n"},
		{[]domain.NameValue{{Name: "bad name", Value: "x"}, {Name: "B", Value: ""}}, "export B=''\n" + PreambleSentinel + "\n"},
	}
	for _, tt := range tests {
		if got := string(Preamble(tt.vars)); got != tt.want {
			t.Errorf("Preamble(%v) = %q, want %q", tt.vars, got, tt.want)
		}
	}
}

func TestRemoteCommandShape(t *testing.T) {
	got := RemoteCommand(RemoteSpec{Command: "agent --acp", Args: []string{"x y", "it's"}, Workspace: "/w s/it's"})
	for _, want := range []string{
		"cd -- '/w s/it'\\''s' && {\n( agent --acp 'x y' 'it'\\''s'\n) <&3 3<&- &\n} || exit 1\n",
		"exec 3<&0\n",
		"kill -s TERM 0",
		"kill -s KILL 0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("remote command lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "dd ") {
		t.Errorf("no PassEnv, yet the command reads a preamble:\n%s", got)
	}
	// The shell ignores TERM after the runtime has started and before the
	// watchdog (which sends TERM to the group) exists, so a runtime that
	// exits at once cannot have the shell killed before it reports the
	// status; and the watchdog waits for the shell before its KILL.
	runtime := strings.Index(got, ") <&3 3<&- &")
	ignore := strings.Index(got, "\ntrap '' TERM HUP\n")
	watchdog := strings.Index(got, "( trap '' TERM HUP INT")
	if runtime < 0 || ignore < runtime || watchdog < ignore {
		t.Errorf("runtime at %d, TERM ignored at %d, watchdog at %d; want that order:\n%s", runtime, ignore, watchdog, got)
	}
	if !strings.Contains(got, `kill -0 $$`) {
		t.Errorf("the watchdog does not wait for the shell:\n%s", got)
	}
	withPre := RemoteCommand(RemoteSpec{Command: "agent", Workspace: "/", PassEnv: []string{"A"}, PreambleLen: 42})
	if !strings.Contains(withPre, "dd bs=1 count=42 ") || !strings.Contains(withPre, "command -v dd") {
		t.Errorf("preamble read missing:\n%s", withPre)
	}
}

// TestRemoteCommandThroughShell runs the remote command through a real sh
// the way sshd would, with the preamble and protocol bytes on stdin.
func TestRemoteCommandThroughShell(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "work space 'q'")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(hostile))
	env := map[string]string{}
	for i, v := range hostile {
		names[i] = "ACPD_V" + strconv.Itoa(i)
		env[names[i]] = v
	}
	vars := PassEnvValues(names, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	pre := Preamble(vars)
	// The fragment writes every variable NUL-separated to a file, then
	// echoes standard input back (the protocol bytes must all arrive).
	var frag strings.Builder
	frag.WriteString("{ ")
	for _, n := range names {
		frag.WriteString(`printf '%s\0' "$` + n + `"; `)
	}
	frag.WriteString("} > ../vars; pwd > ../pwd; cat")
	protocol := "{\"jsonrpc\":\"2.0\"}\nmore bytes\n"

	t.Run("preamble and protocol", func(t *testing.T) {
		cmd := RemoteCommand(RemoteSpec{Command: frag.String(), Workspace: ws, PassEnv: names, PreambleLen: len(pre)})
		out, stderr, code := runSh(t, dir, cmd, append(append([]byte(nil), pre...), protocol...), nil)
		if code != 0 || out != protocol {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, "vars"))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(string(data), "\x00")
		for i, v := range hostile {
			if got[i] != v {
				t.Errorf("%s = %q remotely, want %q", names[i], got[i], v)
			}
		}
		pwd, _ := os.ReadFile(filepath.Join(dir, "pwd"))
		if strings.TrimSuffix(string(pwd), "\n") != ws {
			t.Errorf("ran in %q, want %q", pwd, ws)
		}
		if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
			t.Fatal("a value was executed")
		}
	})

	t.Run("truncated preamble fails the launch", func(t *testing.T) {
		_ = os.Remove(filepath.Join(dir, "pwd"))
		for _, cut := range []int{0, 1, len(pre) / 2, len(pre) - 2, len(pre) - 1} {
			cmd := RemoteCommand(RemoteSpec{Command: frag.String(), Workspace: ws, PassEnv: names, PreambleLen: len(pre)})
			_, stderr, code := runSh(t, dir, cmd, pre[:cut], nil)
			if code != ExitRemotePreambleTruncated || !strings.Contains(stderr, MsgRemotePreambleTruncated) {
				t.Errorf("cut at %d: exit %d, stderr %q", cut, code, stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "pwd")); err == nil {
			t.Fatal("the runtime started after a truncated preamble")
		}
	})

	t.Run("no dd", func(t *testing.T) {
		cmd := RemoteCommand(RemoteSpec{Command: "true", Workspace: ws, PassEnv: names, PreambleLen: len(pre)})
		_, stderr, code := runSh(t, dir, cmd, pre, []string{"PATH=" + dir})
		if code != ExitRemoteNoDD || !strings.Contains(stderr, MsgRemoteNoDD) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("arguments are literal", func(t *testing.T) {
		cmd := RemoteCommand(RemoteSpec{Command: `printf '%s\0'`, Args: hostile[1:], Workspace: ws})
		out, stderr, code := runSh(t, dir, cmd, nil, nil)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		got := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
		if strings.Join(got, "|") != strings.Join(hostile[1:], "|") {
			t.Errorf("args arrived as %q", got)
		}
	})

	t.Run("fragment ending in a comment", func(t *testing.T) {
		cmd := RemoteCommand(RemoteSpec{Command: "echo hi # a comment", Args: []string{"dropped"}, Workspace: ws})
		out, _, code := runSh(t, dir, cmd, nil, nil)
		if code != 0 || out != "hi\n" {
			t.Errorf("exit %d, out %q", code, out)
		}
	})

	for _, tt := range []struct {
		name, frag, ws string
		code           int
		stderr         string
	}{
		{"exit status passes through", "exit 7", ws, 7, ""},
		{"missing program is 127 with the shell's message", "acpdrive-no-such-program --acp", ws, 127, "acpdrive-no-such-program"},
		{"missing workspace", "true", filepath.Join(dir, "nope"), 1, "nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runSh(t, dir, RemoteCommand(RemoteSpec{Command: tt.frag, Workspace: tt.ws}), nil, nil)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestRemoteCommandEndsGroupWhenParentGoes stands in for sshd: a parent
// shell runs the remote command, then dies by SIGKILL like a dropped
// connection. The runtime ignores TERM and EOF and spawns a child; nothing
// of the group may be left.
func TestRemoteCommandEndsGroupWhenParentGoes(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	frag := "trap '' TERM HUP; sleep 300 & while :; do sleep 1; done"
	inner := RemoteCommand(RemoteSpec{Command: frag, Workspace: t.TempDir()})
	parent := exec.Command("/bin/sh", "-c", "/bin/sh -c \"$1\"; :", "sh", inner)
	parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := parent.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for len(groupMembers(pgid)) < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(groupMembers(pgid)); n < 4 {
		t.Fatalf("group has %d members, want the parent, the wrapper, the runtime, its child, the watchdog", n)
	}
	_ = parent.Process.Kill()
	_ = parent.Wait()
	deadline = time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		if len(groupMembers(pgid)) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	left := groupMembers(pgid)
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	t.Fatalf("survivors after the parent died: %v", left)
}

// groupMembers lists the live (non-zombie) processes of group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, pid)
		}
	}
	return out
}
