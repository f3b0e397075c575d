package refagent

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// servedAgent is a harness running Serve instead of Main, with a Terminate
// channel.
type servedAgent struct {
	*harness
	term chan struct{}
}

func startServed(t *testing.T, args ...string) *servedAgent {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, in: inW, lines: make(chan string, 1024), done: make(chan int, 1), stderr: &lockedBuffer{}, cancel: cancel}
	s := &servedAgent{harness: h, term: make(chan struct{}, 1)}
	go func() {
		code := Serve(ctx, ServeOptions{Args: args, Stdin: inR, Stdout: outW, Stderr: h.stderr, Terminate: s.term})
		_ = outW.Close()
		// The end of a process closes its stdin: the reading goroutine a
		// returning Serve leaves behind ends with it.
		_ = inR.Close()
		h.done <- code
	}()
	go func() {
		defer close(h.lines)
		br := bufio.NewReader(outR)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				h.lines <- strings.TrimSuffix(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		defer cancel()
		if h.code == nil {
			h.wait()
		}
		for range h.lines {
		}
	})
	return s
}

func TestServeEcho(t *testing.T) {
	t.Parallel()
	s := startServed(t)
	s.send(initReq)
	s.expect(initResp)
	s.send(newReq)
	s.expect(newResp)
	s.send(prompt(2, "ref-1", "hello, reference agent!"))
	s.expect(
		chunk("ref-1", "m-1", "hello, reference"),
		chunk("ref-1", "m-1", " agent!"),
		stopLine(2, "end_turn"),
	)
	if code := s.closeStdin(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}

func TestServeTerminate(t *testing.T) {
	t.Parallel()
	s := startServed(t)
	s.send(initReq)
	s.expect(initResp)
	s.term <- struct{}{}
	if code := s.wait(); code != exitCodeSIGTERM {
		t.Fatalf("exit code %d, want %d", code, exitCodeSIGTERM)
	}
}

func TestServeTerminateClosedChannel(t *testing.T) {
	t.Parallel()
	s := startServed(t)
	close(s.term)
	if code := s.wait(); code != exitCodeSIGTERM {
		t.Fatalf("exit code %d, want %d", code, exitCodeSIGTERM)
	}
}

func TestServeIgnoreSigterm(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--ignore-sigterm"}, {"--scenario", "ignore-sigterm"}, {"--scenario", "stubborn"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			s := startServed(t, args...)
			s.send(initReq)
			s.expect(initResp)
			s.term <- struct{}{}
			deadline := time.Now().Add(waitFor)
			for !strings.Contains(s.stderr.String(), "ignoring SIGTERM") {
				if time.Now().After(deadline) {
					t.Fatalf("stderr %q does not report the ignored SIGTERM", s.stderr.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			s.send(newReq)
			s.expect(newResp)
			if args[len(args)-1] == "stubborn" {
				// Stdin's end does not end it either; only ctx does.
				_ = s.in.Close()
				s.quiet(100 * time.Millisecond)
				s.cancel()
			}
			if code := s.closeStdin(); code != 0 {
				t.Fatalf("exit code %d, want 0", code)
			}
		})
	}
}

func TestServeScriptedExit(t *testing.T) {
	t.Parallel()
	s := startServed(t, "--scenario", "exit-before-init")
	s.send(initReq)
	if code := s.wait(); code != 7 {
		t.Fatalf("exit code %d, want 7", code)
	}
	if len(s.rest()) != 0 {
		t.Fatal("exit-before-init answered initialize")
	}
	if !strings.Contains(s.stderr.String(), "exit-before-init") {
		t.Fatalf("stderr %q lacks the scripted message", s.stderr.String())
	}
}

func TestServeRefusesSpawningScenario(t *testing.T) {
	t.Parallel()
	s := startServed(t, "--scenario", "orphan-stdout")
	if code := s.wait(); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if got := s.stderr.String(); !strings.Contains(got, "not supported in-process") {
		t.Fatalf("stderr %q does not say why", got)
	}
}

func TestServeRefusesSpawningTurn(t *testing.T) {
	t.Parallel()
	s := startServed(t)
	s.send(initReq)
	s.expect(initResp)
	s.send(newReq)
	s.expect(newResp)
	s.send(prompt(2, "ref-1", "#orphan-stdout"))
	if code := s.wait(); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if got := s.stderr.String(); !strings.Contains(got, `turn "orphan-stdout" spawns a descendant`) {
		t.Fatalf("stderr %q does not say why", got)
	}
	// The shared built-in script is untouched.
	sc, _ := Scenario(DefaultScenario)
	if !hasSpawn(sc.Turns["orphan-stdout"].Steps) {
		t.Fatal("Scenario lost its spawn step")
	}
}

func TestServeUsageError(t *testing.T) {
	t.Parallel()
	s := startServed(t, "--scenario", "no-such-scenario")
	if code := s.wait(); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
}

func TestServeContextEnds(t *testing.T) {
	t.Parallel()
	s := startServed(t, "--scenario", "stubborn")
	s.send(initReq)
	s.expect(initResp)
	s.cancel()
	if code := s.wait(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}
