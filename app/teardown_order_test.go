package app_test

import (
	"context"
	"io"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/ports/mocks"
	"github.com/acpdrive/acpdrive/refagent"
)

// mockStdin is the runtime's stdin as a gomock mock, so closing it takes
// its place in gomock.InOrder with the Process port's calls. Writes go to
// the pipe the reference agent reads.
type mockStdin struct {
	ctrl *gomock.Controller
	w    *os.File
}

func (m *mockStdin) Write(b []byte) (int, error) { return m.w.Write(b) }

func (m *mockStdin) Close() error {
	m.ctrl.T.Helper()
	ret := m.ctrl.Call(m, "Close")
	err, _ := ret[0].(error)
	return err
}

func (m *mockStdin) expectClose() *gomock.Call {
	return m.ctrl.RecordCallWithMethodType(m, "Close", reflect.TypeOf((*mockStdin)(nil).Close))
}

// mockedRuntime is a mocked Launcher → Plan → Process whose streams are
// served by the reference agent in this process; the Process's lifecycle
// methods are the test's expectations.
type mockedRuntime struct {
	launcher *mocks.MockLauncher
	proc     *mocks.MockProcess
	stdin    *mockStdin
	stdout   *os.File

	agentIn, agentOut *os.File
	cancel            context.CancelFunc
	served            chan struct{} // closed when the agent returned
	exited            chan struct{} // the Process's Exited
	exitOnce          sync.Once
}

const mockPID = 4242

func newMockedRuntime(t *testing.T, ctrl *gomock.Controller, command []string, workspace string, args ...string) *mockedRuntime {
	t.Helper()
	inR, inW, err := os.Pipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &mockedRuntime{
		launcher: mocks.NewMockLauncher(ctrl),
		proc:     mocks.NewMockProcess(ctrl),
		stdin:    &mockStdin{ctrl: ctrl, w: inW},
		stdout:   outR,
		agentIn:  inR, agentOut: outW,
		cancel: cancel,
		served: make(chan struct{}),
		exited: make(chan struct{}),
	}
	plan := mocks.NewMockPlan(ctrl)
	r.launcher.EXPECT().Prepare(ports.LaunchRequest{Command: command, Workspace: workspace}).Return(plan, nil)
	plan.EXPECT().Target().Return(ports.Target{}).AnyTimes()
	plan.EXPECT().Start(gomock.Any(), gomock.Any()).DoAndReturn(func(context.Context, []string) (ports.Process, error) {
		go func() {
			defer close(r.served)
			refagent.Serve(ctx, refagent.ServeOptions{Args: args, Stdin: inR, Stdout: outW, Stderr: io.Discard})
			_ = outW.Close()
			_ = inR.Close()
		}()
		return r.proc, nil
	})
	r.proc.EXPECT().Identity().Return(ports.Identity{PID: mockPID}).AnyTimes()
	r.proc.EXPECT().Stdin().Return(r.stdin).AnyTimes()
	r.proc.EXPECT().Stdout().Return(outR).AnyTimes()
	r.proc.EXPECT().Exited().Return(r.exited).AnyTimes()
	r.proc.EXPECT().Exit().Return(domain.ExitStatus{Exited: true}).AnyTimes()
	t.Cleanup(func() {
		r.kill()
		<-r.served
		_ = outR.Close()
		_ = inW.Close()
	})
	return r
}

// exit marks the process as ended.
func (r *mockedRuntime) exit() { r.exitOnce.Do(func() { close(r.exited) }) }

// kill ends the agent as SIGKILL would.
func (r *mockedRuntime) kill() {
	r.cancel()
	_ = r.agentIn.Close()
	_ = r.agentOut.Close()
	<-r.served
	r.exit()
}

// stepLog records the teardown steps with the fake time they happened at.
type stepLog struct {
	mu    sync.Mutex
	clock *fakeclock.Clock
	steps []string
	at    []time.Time
}

func (l *stepLog) add(step string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, step)
	l.at = append(l.at, l.clock.Now())
}

func (l *stepLog) get() ([]string, []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.steps...), append([]time.Time(nil), l.at...)
}

func mockedOptions(t *testing.T, r *mockedRuntime, clock *fakeclock.Clock, command []string, workspace string) app.Options {
	o, _, _ := baseOptions(t, withClock(clock))
	o.Settings.Command = command
	o.Workspace = workspace
	o.Launcher = r.launcher
	return o
}

// TestTeardownOrderForARuntimeThatNeverExits checks the order of
// docs/behaviour.md#teardown on the Process port: close stdin, the 1 s
// exit window, SIGTERM, the rest of the grace, SIGKILL (always), close
// stdout, release.
func TestTeardownOrderForARuntimeThatNeverExits(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	clock := fakeclock.New(epoch)
	command, workspace := []string{"mocked-runtime", "--acp"}, t.TempDir()
	r := newMockedRuntime(t, ctrl, command, workspace, "--scenario", "stubborn")
	o := mockedOptions(t, r, clock, command, workspace)
	o.Settings.StopGrace = 3 * time.Second
	steps := &stepLog{clock: clock}
	gomock.InOrder(
		r.stdin.expectClose().DoAndReturn(func() error { steps.add("close stdin"); return r.stdin.w.Close() }),
		r.proc.EXPECT().Terminate().DoAndReturn(func() error { steps.add("terminate"); return nil }),
		r.proc.EXPECT().Kill().DoAndReturn(func() error { steps.add("kill"); r.kill(); return nil }),
		r.proc.EXPECT().CloseStdout().DoAndReturn(func() error { steps.add("close stdout"); return r.stdout.Close() }),
		r.proc.EXPECT().Release().DoAndReturn(func() error { steps.add("release"); return nil }),
	)

	sess, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, mockPID, sess.PID())
	began := clock.Now()
	pending := clock.Pending()
	stopped := make(chan error, 1)
	go func() { stopped <- sess.Stop(context.Background()) }()

	// The exit window: stdin is closed, nothing else yet.
	require.NoError(t, clock.WaitForTimers(context.Background(), pending+1))
	got, _ := steps.get()
	assert.Equal(t, []string{"close stdin"}, got)
	clock.Advance(time.Second - time.Millisecond)
	got, _ = steps.get()
	assert.Equal(t, []string{"close stdin"}, got, "no SIGTERM inside the exit window")
	clock.Advance(time.Millisecond)
	// SIGTERM, then the rest of the grace.
	require.Eventually(t, func() bool { s, _ := steps.get(); return len(s) == 2 }, waitFor, time.Millisecond)
	require.NoError(t, clock.WaitForTimers(context.Background(), pending+1))
	clock.Advance(2 * time.Second)
	select {
	case err = <-stopped:
	case <-time.After(waitFor):
		t.Fatal("Stop did not return")
	}
	require.NoError(t, err)
	got, at := steps.get()
	assert.Equal(t, []string{"close stdin", "terminate", "kill", "close stdout", "release"}, got)
	assert.Equal(t, began, at[0])
	assert.Equal(t, began.Add(time.Second), at[1], "SIGTERM after the 1 s window")
	assert.Equal(t, began.Add(3*time.Second), at[2], "SIGKILL when the grace ends")
	assert.NoError(t, sess.Stop(context.Background()), "idempotent; no second teardown")
}

// TestTeardownOrderForARuntimeThatExitsInTheWindow: a runtime that exits
// once its stdin is closed gets no SIGTERM; the SIGKILL backstop still
// runs, then stdout is closed and the streams released, at once.
func TestTeardownOrderForARuntimeThatExitsInTheWindow(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	clock := fakeclock.New(epoch)
	command, workspace := []string{"mocked-runtime"}, t.TempDir()
	r := newMockedRuntime(t, ctrl, command, workspace)
	o := mockedOptions(t, r, clock, command, workspace)
	steps := &stepLog{clock: clock}
	gomock.InOrder(
		r.stdin.expectClose().DoAndReturn(func() error {
			steps.add("close stdin")
			err := r.stdin.w.Close()
			<-r.served // the echo agent returns at the end of its stdin
			r.exit()
			return err
		}),
		r.proc.EXPECT().Kill().DoAndReturn(func() error { steps.add("kill"); r.kill(); return nil }),
		r.proc.EXPECT().CloseStdout().DoAndReturn(func() error { steps.add("close stdout"); return r.stdout.Close() }),
		r.proc.EXPECT().Release().DoAndReturn(func() error { steps.add("release"); return nil }),
	)
	r.proc.EXPECT().Terminate().Times(0)

	sess, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	res := sess.Turn(context.Background(), "hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	began := clock.Now()
	// The fake clock is never advanced: Stop waits on no timer.
	require.NoError(t, sess.Stop(context.Background()))
	got, at := steps.get()
	assert.Equal(t, []string{"close stdin", "kill", "close stdout", "release"}, got)
	for _, a := range at {
		assert.Equal(t, began, a)
	}
}
