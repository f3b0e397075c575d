//go:build unix

// Package sshtest runs a real OpenSSH sshd on 127.0.0.1 for tests, with a
// throwaway host key, an authorized key and configs of its own, and holds
// the transport-neutral SSH contract suite (RunContract) both SSH
// transports run.
//
// The remote account is a second local user, acpdrive-remote, when the
// tests run as root and the account exists (.ci/run creates it before the
// tests, with a password field of "*" so that sshd accepts a key), so the
// remote side runs as another user. Otherwise the fixture logs in as the
// current user and says so in the test log; the remote environment is
// still sshd's, not the test process's (sshd builds it afresh and accepts
// no variable). The fixture creates and changes no account. As the
// current user, every channel starts that user's login shell with its
// start-up files (bash reads ~/.bashrc under sshd), which can take a
// long time on a loaded machine: tests assert what the transports
// guarantee, never how fast a channel starts.
//
// When sshd is missing the tests skip, except under CI=true, where they
// fail: CI installs openssh-server (.ci/run) and must not skip silently.
package sshtest

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
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
)

// RemoteUser is the remote account the fixture uses as root when it
// exists (.ci/run creates it).
const RemoteUser = "acpdrive-remote"

// CurrentUserEnv, set to 1, makes the fixture log in as the current user
// even when RemoteUser exists.
const CurrentUserEnv = "ACPDRIVE_SSHTEST_CURRENT_USER"

// Alias is the client-config host alias of the running sshd; SecondAlias
// is another alias of the same sshd (a second host, as a pool sees it);
// DownAlias names a port nothing listens on.
const (
	Alias       = "acpdrive-test"
	SecondAlias = "acpdrive-test-2"
	DownAlias   = "acpdrive-test-down"
)

// Server is a running sshd.
type Server struct {
	// Alias is the Host alias in ConfigFile (Alias).
	Alias string
	// SecondAlias is another alias in ConfigFile for the same sshd.
	SecondAlias string
	// DownAlias is an alias in ConfigFile whose port is closed.
	DownAlias string
	// Host is 127.0.0.1.
	Host string
	// Port is the port sshd listens on.
	Port int
	// DownPort is a port nothing listens on.
	DownPort int
	// User is the remote account.
	User string
	// UID is its user ID.
	UID int
	// ConfigFile is an ssh client config (ssh -F) for Alias and DownAlias.
	ConfigFile string
	// KnownHosts is the UserKnownHostsFile ConfigFile names. Start seeds it
	// with HostKey; tests may rewrite it.
	KnownHosts string
	// IdentityFile is the private key authorized for User.
	IdentityFile string
	// HostKey is the server's public host key, "ssh-ed25519 AAAA...".
	HostKey string
	// Dir is a directory readable by User (mode 0755 along its path).
	Dir string
	// BinDir is a directory (under Dir, 0755) for programs User runs.
	BinDir string
	// Workspace is a directory owned by User, to run the runtime in.
	Workspace string

	sshd       *exec.Cmd
	sshdPID    int
	log        *SyncBuffer
	execKnown  string
	sameUser   bool
	stopOnce   sync.Once
	sshdWaited chan struct{}
}

// KnownHostsLine returns the known_hosts line for key at this server's
// address ("[127.0.0.1]:PORT key").
func (s *Server) KnownHostsLine(key string) string {
	return fmt.Sprintf("[%s]:%d %s\n", s.Host, s.Port, key)
}

// SetKnownHosts replaces the known_hosts file with content.
func (s *Server) SetKnownHosts(t testing.TB, content string) {
	t.Helper()
	if err := os.WriteFile(s.KnownHosts, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Log returns what sshd logged so far.
func (s *Server) Log() string { return s.log.String() }

// Require skips the test when sshd is absent, or fails it under CI=true.
// It returns sshd's absolute path.
func Require(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("sshd")
	if err != nil {
		for _, p := range []string{"/usr/sbin/sshd", "/usr/local/sbin/sshd"} {
			if _, e := os.Stat(p); e == nil {
				path, err = p, nil
				break
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sshd not found and CI=true: install openssh-server (.ci/run does)")
		}
		t.Skip("sshd not found (install openssh-server to run the SSH tests)")
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ssh-keygen not found and CI=true")
		}
		t.Skip("ssh-keygen not found")
	}
	abs, _ := filepath.Abs(path)
	return abs
}

// Start starts sshd and registers its Stop with t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	sshdPath := Require(t)
	uname, uid, gid, same := remoteAccount(t)

	dir, err := os.MkdirTemp("", "acpdrive-sshd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	mustChmod(t, dir, 0o755)
	s := &Server{
		Alias:       Alias,
		SecondAlias: SecondAlias,
		DownAlias:   DownAlias,
		Host:        "127.0.0.1",
		User:        uname,
		UID:         uid,
		Dir:         dir,
		BinDir:      filepath.Join(dir, "bin"),
		Workspace:   filepath.Join(dir, "workspace"),
		ConfigFile:  filepath.Join(dir, "ssh_config"),
		KnownHosts:  filepath.Join(dir, "known_hosts"),
		execKnown:   filepath.Join(dir, "known_hosts_exec"),
		sameUser:    same,
		log:         &SyncBuffer{},
	}
	for _, d := range []string{s.BinDir, s.Workspace} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !same {
		if err := os.Chown(s.Workspace, uid, gid); err != nil {
			t.Fatal(err)
		}
	}

	hostKey := filepath.Join(dir, "host_ed25519")
	s.IdentityFile = filepath.Join(dir, "id_ed25519")
	for _, k := range []string{hostKey, s.IdentityFile} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "acpdrive-test", "-f", k).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	s.HostKey = readPub(t, hostKey+".pub")
	authorized := filepath.Join(dir, "authorized_keys")
	writeFile(t, authorized, readPub(t, s.IdentityFile+".pub")+"\n", 0o644)

	s.Port = freePort(t)
	s.DownPort = freePort(t)
	writeFile(t, filepath.Join(dir, "sshd_config"), strings.Join([]string{
		"Port " + strconv.Itoa(s.Port),
		"ListenAddress 127.0.0.1",
		"HostKey " + hostKey,
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"AuthorizedKeysFile " + authorized,
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitRootLogin yes",
		"AllowUsers " + uname,
		"LogLevel VERBOSE",
		"PrintMotd no",
		"AcceptEnv none",
		"PermitUserEnvironment no",
		"MaxStartups 100",
		"MaxSessions 100",
		"",
	}, "\n"), 0o644)
	clientCfg := func(alias string, port int, known string) string {
		return strings.Join([]string{
			"Host " + alias,
			"  HostName 127.0.0.1",
			"  Port " + strconv.Itoa(port),
			"  User " + uname,
			"  IdentityFile " + s.IdentityFile,
			"  IdentitiesOnly yes",
			"  UserKnownHostsFile " + known,
			"  GlobalKnownHostsFile /dev/null",
			"  LogLevel ERROR",
			"",
		}, "\n")
	}
	writeFile(t, s.ConfigFile, clientCfg(Alias, s.Port, s.KnownHosts)+clientCfg(SecondAlias, s.Port, s.KnownHosts)+
		clientCfg(DownAlias, s.DownPort, s.KnownHosts), 0o644)
	s.SetKnownHosts(t, s.KnownHostsLine(s.HostKey))
	writeFile(t, s.execKnown, s.KnownHostsLine(s.HostKey), 0o600)

	if os.Geteuid() == 0 {
		// Debian's sshd wants its privilege-separation directory.
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.Stdout = s.log
	cmd.Stderr = s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	s.sshd = cmd
	s.sshdPID = cmd.Process.Pid
	s.sshdWaited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.sshdWaited) }()
	t.Cleanup(func() { s.Stop(t) })

	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)), 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-s.sshdWaited:
			t.Fatalf("sshd exited at start:\n%s", s.Log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on port %d:\n%s", s.Port, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if same {
		t.Logf("sshtest: the remote account is the current user %q, whose login shell and start-up files run on every channel (as root, %s is used when it exists; .ci/run creates it)", uname, RemoteUser)
	}
	return s
}

// Stop kills sshd and every process of the remote user it left behind
// (by process ID). Start registers it; calling it again does nothing.
func (s *Server) Stop(t testing.TB) {
	s.stopOnce.Do(func() {
		left := s.RemoteProcs(t)
		_ = syscall.Kill(-s.sshdPID, syscall.SIGTERM)
		select {
		case <-s.sshdWaited:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-s.sshdPID, syscall.SIGKILL)
			<-s.sshdWaited
		}
		for _, p := range left {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
}

// ExecOutput runs cmd as the remote user through this sshd (not through
// the transport under test) and returns its standard output and error.
func (s *Server) ExecOutput(t testing.TB, cmd string) (string, error) {
	t.Helper()
	c := exec.Command("ssh", "-F", s.ConfigFile, "-o", "BatchMode=yes",
		"-o", "UserKnownHostsFile="+s.execKnown, "-o", "StrictHostKeyChecking=yes", "--", s.Alias, cmd)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	c.Stdin = nil
	err := c.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, errb.String())
	}
	return out.String(), nil
}

// Exec runs cmd as the remote user and returns its standard output; it
// fails the test when cmd fails.
func (s *Server) Exec(t testing.TB, cmd string) string {
	t.Helper()
	out, err := s.ExecOutput(t, cmd)
	if err != nil {
		t.Fatalf("remote %q: %v", cmd, err)
	}
	return out
}

// Proc is a process of the remote user.
type Proc struct {
	PID, PPID int
	Name      string
	Cmdline   string
}

// String renders the process for a failure message.
func (p Proc) String() string { return fmt.Sprintf("%d(%s: %s)", p.PID, p.Name, p.Cmdline) }

// RemoteProcs returns the live processes of the remote user started
// through this sshd (see ours; other fixtures may share the account). The
// sshd session processes themselves are left out.
func (s *Server) RemoteProcs(t testing.TB) []Proc {
	all := readProcs()
	byPID := map[int]procInfo{}
	for _, p := range all {
		byPID[p.PID] = p
	}
	var out []Proc
	for _, p := range all {
		if p.uid != s.UID || p.state == "Z" || p.state == "X" || strings.HasPrefix(p.Name, "sshd") {
			continue
		}
		if !s.ours(byPID, p) {
			continue
		}
		out = append(out, p.Proc)
	}
	return out
}

// ours reports whether p was started through this sshd: its environment
// carries the SSH_CONNECTION sshd set, ending in this server's port (the
// variable is inherited by orphans too), or, when the environment cannot
// be read, it descends from this sshd or runs a program under Dir.
func (s *Server) ours(byPID map[int]procInfo, p procInfo) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/environ")
	if err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("SSH_CONNECTION=")); ok {
				return bytes.HasSuffix(v, []byte(" "+strconv.Itoa(s.Port)))
			}
		}
		return false
	}
	return descends(byPID, p.PID, s.sshdPID) || strings.Contains(p.Cmdline, s.Dir)
}

// WaitNoRemoteProcs polls until the remote user has no process or bound
// passes, and returns what is left.
func (s *Server) WaitNoRemoteProcs(t testing.TB, bound time.Duration) []Proc {
	deadline := time.Now().Add(bound)
	for {
		left := s.RemoteProcs(t)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Install copies the file at src into BinDir as name, mode 0755, and
// returns its path.
func (s *Server) Install(t testing.TB, src, name string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(s.BinDir, name)
	writeFile(t, dst, string(data), 0o755)
	return dst
}

type procInfo struct {
	Proc
	uid   int
	state string
}

func readProcs() []procInfo {
	entries, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		base := "/proc/" + e.Name()
		stat, err := os.ReadFile(base + "/stat")
		if err != nil {
			continue
		}
		st := string(stat)
		i, j := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(st[j+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		uid := -1
		if status, err := os.Open(base + "/status"); err == nil {
			sc := bufio.NewScanner(status)
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
					if fs := strings.Fields(rest); len(fs) > 0 {
						uid, _ = strconv.Atoi(fs[0])
					}
					break
				}
			}
			_ = status.Close()
		}
		cmdline, _ := os.ReadFile(base + "/cmdline")
		out = append(out, procInfo{
			Proc:  Proc{PID: pid, PPID: ppid, Name: st[i+1 : j], Cmdline: strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")},
			uid:   uid,
			state: f[0],
		})
	}
	return out
}

// Cmdlines returns the raw argument lists of every process on the machine
// (NUL-separated as /proc has them), for checks that a value is on none.
func Cmdlines() map[int][]byte {
	entries, _ := os.ReadDir("/proc")
	out := map[int][]byte{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil {
			out[pid] = b
		}
	}
	return out
}

func descends(byPID map[int]procInfo, pid, ancestor int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == ancestor {
			return true
		}
		p, ok := byPID[pid]
		if !ok {
			return false
		}
		pid = p.PPID
	}
	return false
}

// remoteAccount returns the remote account: RemoteUser when this process
// runs as root and the account exists and is not locked (.ci/run creates
// it), else the current user. CurrentUserEnv=1 picks the current user
// even then. It creates or changes no account: a test
// suite changes nothing outside the repository and its temporary
// directories.
func remoteAccount(t testing.TB) (name string, uid, gid int, same bool) {
	t.Helper()
	if os.Geteuid() == 0 && os.Getenv(CurrentUserEnv) != "1" {
		if u, err := user.Lookup(RemoteUser); err == nil && !locked(RemoteUser) {
			uid, _ = strconv.Atoi(u.Uid)
			gid, _ = strconv.Atoi(u.Gid)
			return RemoteUser, uid, gid, false
		}
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return u.Username, uid, gid, true
}

// locked reports whether name's password field in /etc/shadow starts with
// "!": sshd (without PAM) refuses such an account even a key. An
// unreadable shadow file counts as not locked.
func locked(name string) bool {
	data, err := os.ReadFile("/etc/shadow")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) >= 2 && f[0] == name {
			return strings.HasPrefix(f[1], "!")
		}
	}
	return false
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func readPub(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		t.Fatalf("bad public key %s", path)
	}
	return f[0] + " " + f[1]
}

func writeFile(t testing.TB, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	mustChmod(t, path, mode)
}

func mustChmod(t testing.TB, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// SyncBuffer is a bytes.Buffer safe for concurrent use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
