package app

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// runtime is the started runtime as one session owns it: the process, the
// connection to it, the typed client over that connection, the exit
// watcher and the fixed teardown order (teardown.go). The rest of the
// session reaches the runtime only through it.
type runtime struct {
	log        *slog.Logger
	clock      ports.Clock
	drainBound time.Duration

	// Set once by start; read-only afterwards. proc is nil until a
	// process runs (and stays nil when the start failed before).
	target ports.Target
	proc   ports.Process
	conn   *jsonrpc.Conn
	client *acpclient.Client

	outputLost atomic.Bool // the drain bound elapsed after the reap

	stopping chan struct{} // closed when teardown begins
	stopOnce sync.Once
	stopDone chan struct{} // closed when teardown has finished
	stopErr  error
	wg       sync.WaitGroup // the exit watcher
}

func newRuntime(log *slog.Logger, clock ports.Clock, drainBound time.Duration) *runtime {
	return &runtime{log: log, clock: clock, drainBound: drainBound,
		stopping: make(chan struct{}), stopDone: make(chan struct{})}
}

// start starts plan with env and connects to the runtime; h receives
// everything the runtime sends, and betweenTurns runs when the stream
// ends while no turn runs (docs/behaviour.md#events).
func (r *runtime) start(ctx context.Context, plan ports.Plan, env []string, h jsonrpc.Handler, betweenTurns func()) error {
	proc, err := plan.Start(ctx, env)
	if err != nil {
		if ctx.Err() != nil {
			return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
		}
		return keepKind(err, msgStartFailed)
	}
	r.proc = proc
	r.conn = jsonrpc.NewConn(proc.Stdout(), proc.Stdin(), h, jsonrpc.Options{Logger: r.log})
	r.client = acpclient.New(r.conn)
	r.wg.Add(1)
	go r.watchExit(betweenTurns)
	return nil
}

// keepKind keeps an AgentError's kind and makes anything else port_exit.
func keepKind(err error, msg string) error {
	if _, ok := domain.KindOf(err); ok {
		return err
	}
	return domain.WrapError(domain.KindPortExit, msg, err)
}

// identity names the runtime as the transport started it.
func (r *runtime) identity() ports.Identity {
	if r.proc == nil {
		return ports.Identity{}
	}
	return r.proc.Identity()
}

// pid is the local process watched, 0 when none.
func (r *runtime) pid() int { return r.identity().PID }

// ended reports whether the runtime's stream has ended.
func (r *runtime) ended() bool { return r.conn != nil && isDone(r.conn.Done()) }

// watchExit enforces the drain bound: once the runtime process is reaped,
// its standard output gets drainBound to reach end of stream before the
// session closes it itself. When the stream ends first, betweenTurns
// reports what it still held.
func (r *runtime) watchExit(betweenTurns func()) {
	defer r.wg.Done()
	select {
	case <-r.proc.Exited():
	case <-r.conn.Done():
		betweenTurns()
		return
	case <-r.stopping:
		return
	}
	select {
	case <-r.conn.Done():
		betweenTurns()
		return
	case <-r.stopping:
		return
	case <-r.clock.After(r.drainBound):
	}
	r.outputLost.Store(true)
	r.log.Warn("agent stdout was not fully collected before the session ended", "drain_bound", r.drainBound)
	_ = r.proc.CloseStdout()
}

// lostConnection is the result of a turn whose connection ended before
// the runtime's answer.
func (r *runtime) lostConnection(cause error) domain.TurnResult {
	if r.outputLost.Load() {
		return domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgOutputNotCollected))
	}
	return domain.FailedResult(domain.WrapError(domain.KindPortExit, domain.MsgConnEndedBeforeResult, cause))
}

// stop runs the teardown once, by deadline, and returns its result; a
// later stop waits for the first one's.
func (r *runtime) stop(deadline time.Time, grace time.Duration, td teardownSteps) error {
	r.stopOnce.Do(func() {
		close(r.stopping)
		r.stopErr = r.teardown(deadline, grace, td)
		close(r.stopDone)
	})
	<-r.stopDone
	return r.stopErr
}

// isDone reports whether ch is closed, without waiting.
func isDone(ch <-chan struct{}) (done bool) {
	select {
	case <-ch:
		done = true
	default:
	}
	return done
}
