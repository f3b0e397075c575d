package app_test

import (
	"context"
	"fmt"
	"io"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

// inProcessLauncher is a ports.Launcher that runs the reference agent in
// this process over pipes instead of starting a subprocess: the kind of
// launcher a test or an embedding program can supply.
type inProcessLauncher struct{}

type inProcess struct {
	stdinR, stdoutR *io.PipeReader
	stdinW, stdoutW *io.PipeWriter
	cancel          context.CancelFunc
	exited          chan struct{}
	code            int
}

func (inProcessLauncher) Launch(ctx context.Context, req ports.LaunchRequest) (ports.Process, error) {
	p := &inProcess{exited: make(chan struct{})}
	p.stdinR, p.stdinW = io.Pipe()
	p.stdoutR, p.stdoutW = io.Pipe()
	agentCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		p.code = refagent.Main(agentCtx, req.Command[1:], p.stdinR, p.stdoutW, io.Discard)
		p.stdoutW.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *inProcess) PID() int                   { return 0 }
func (p *inProcess) Stdin() io.WriteCloser      { return p.stdinW }
func (p *inProcess) Stdout() io.Reader          { return p.stdoutR }
func (p *inProcess) Terminate() error           { p.cancel(); return nil }
func (p *inProcess) Kill() error                { p.cancel(); return nil }
func (p *inProcess) Exited() <-chan struct{}    { return p.exited }
func (p *inProcess) ExitStatus() string         { return fmt.Sprintf("exit status %d", p.code) }
func (p *inProcess) ExitCode() int              { return p.code }
func (p *inProcess) CloseStdout() error         { return p.stdoutR.Close() }
func (p *inProcess) StderrTail() ([]byte, bool) { return nil, false }
func (p *inProcess) Release() error             { <-p.exited; return nil }

// ExampleStart runs one session of two turns on the reference agent and
// prints the normalized events that carry a message.
func ExampleStart() {
	cfg := domain.DefaultConfig()
	cfg.Command = []string{"acpdrive-agent", "--scenario", "echo"}
	sess, err := app.Start(context.Background(), app.Options{
		Config:    cfg,
		Workspace: "/",
		Launcher:  inProcessLauncher{},
		OnEvent: func(ev domain.Event) {
			if ev.Message != "" {
				fmt.Printf("%s: %s\n", ev.Type, ev.Message)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Stop(context.Background())

	res := sess.Turn(context.Background(), "hello")
	fmt.Println("outcome:", res.Outcome, res.StopReason)
	res = sess.Turn(context.Background(), "#stop-refusal")
	fmt.Println("outcome:", res.Outcome, res.Err.Kind, "retryable:", res.Err.Kind.Retryable())
	// Output:
	// session_started: session started
	// notification: this session started with a declared capability gap in: token counts, session continuation
	// notification: hello
	// outcome: turn_completed end_turn
	// session_started: session started
	// notification: Stopping with refusal.
	// turn_failed: agent refused the prompt (stopReason refusal)
	// outcome: turn_failed turn_refused retryable: false
}
