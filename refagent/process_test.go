//go:build unix

package refagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proc is the reference agent running as a real process (the test binary
// re-executed), in its own process group.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
	exited chan error
}

func startProcess(t *testing.T, stderrToBuffer bool, args ...string) *proc {
	t.Helper()
	enc, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), subprocessEnv+"=1", subprocessArgsEnv+"="+string(enc))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{t: t, cmd: cmd, lines: make(chan string, 64), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	var errR, errW *os.File
	if stderrToBuffer {
		if errR, errW, err = os.Pipe(); err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = errW
	}
	p.stdin, err = cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	stderrDone := make(chan struct{})
	if errW != nil {
		errW.Close()
		go func() {
			defer close(stderrDone)
			_, _ = io.Copy(p.stderr, errR)
			errR.Close()
		}()
	} else {
		close(stderrDone)
	}
	go func() {
		defer close(p.lines)
		defer outR.Close()
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				p.lines <- strings.TrimSuffix(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(waitFor):
			t.Errorf("agent process did not end")
		}
		for range p.lines {
		}
		<-stderrDone
	})
	return p
}

func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

func (p *proc) expect(want string) {
	p.t.Helper()
	select {
	case got := <-p.lines:
		if got != want {
			p.t.Fatalf("got %s\nwant %s", truncate(got), want)
		}
	case <-time.After(waitFor):
		p.t.Fatalf("no line; stderr %q", p.stderr.String())
	}
}

// wait returns the exit code (-1 and the signal for a signalled exit).
func (p *proc) wait() (int, error) {
	p.t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), err
		}
		return 0, err
	case <-time.After(waitFor):
		p.t.Fatalf("agent process did not exit")
	}
	return -1, nil
}

func (p *proc) alive(d time.Duration) bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return false
	case <-time.After(d):
		return true
	}
}

func TestProcessSIGTERM(t *testing.T) {
	t.Parallel()
	p := startProcess(t, false)
	p.send(initReq)
	p.expect(initResp)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code, _ := p.wait(); code != exitCodeSIGTERM {
		t.Fatalf("exit code %d, want %d", code, exitCodeSIGTERM)
	}
}

func TestProcessIgnoreSigterm(t *testing.T) {
	for _, args := range [][]string{{"--ignore-sigterm"}, {"--scenario", "ignore-sigterm"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			p := startProcess(t, true, args...)
			p.send(initReq)
			p.expect(initResp)
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if !p.alive(200 * time.Millisecond) {
				t.Fatal("the agent died of SIGTERM")
			}
			p.send(newReq)
			p.expect(newResp)
			_ = p.stdin.Close()
			if code, err := p.wait(); code != 0 || err != nil {
				t.Fatalf("exit %d %v", code, err)
			}
			if !strings.Contains(p.stderr.String(), "ignoring SIGTERM") {
				t.Fatalf("stderr %q", p.stderr.String())
			}
		})
	}
}

func TestProcessStubborn(t *testing.T) {
	t.Parallel()
	p := startProcess(t, false, "--scenario", "stubborn")
	p.send(initReq)
	p.expect(initResp)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.stdin.Close()
	if !p.alive(300 * time.Millisecond) {
		t.Fatal("the stubborn agent exited")
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if _, err := p.wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("wait: %v", err)
	}
}

func TestProcessExitBeforeInit(t *testing.T) {
	t.Parallel()
	p := startProcess(t, true, "--scenario", "exit-before-init")
	p.send(initReq)
	if code, _ := p.wait(); code != 7 {
		t.Fatalf("exit code %d, want 7", code)
	}
	for range p.lines {
		t.Fatal("stdout carried a line")
	}
	// Wait for stderr to be drained: the pipe closes with the process.
	deadline := time.Now().Add(waitFor)
	for !strings.Contains(p.stderr.String(), "scenario exit-before-init") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if se := p.stderr.String(); !bytes.Contains([]byte(se), []byte("\x1b[1;31merror:\x1b[0m")) {
		t.Fatalf("stderr %q", se)
	}
}

func TestProcessOrphanStdout(t *testing.T) {
	t.Parallel()
	p := startProcess(t, false)
	p.send(initReq)
	p.expect(initResp)
	p.send(newReq)
	p.expect(newResp)
	p.send(prompt(2, "ref-1", "#orphan-stdout"))
	p.expect(chunk("ref-1", "m-1", "Spawning a helper."))
	if code, err := p.wait(); code != 0 || err != nil {
		t.Fatalf("exit %d %v", code, err)
	}
	// The agent is gone, but its descendant still holds stdout open.
	select {
	case line, ok := <-p.lines:
		t.Fatalf("stdout ended or carried %q (ok=%v) while the descendant lives", line, ok)
	case <-time.After(300 * time.Millisecond):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case _, ok := <-p.lines:
		if ok {
			t.Fatal("unexpected line")
		}
	case <-time.After(waitFor):
		t.Fatal("stdout did not end after the process group was killed")
	}
}
