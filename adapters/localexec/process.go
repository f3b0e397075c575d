package localexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/procio"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Contract messages for a start that fails after validation
// (docs/behaviour.md#start-up).
const (
	msgStartFailed         = "failed to start subprocess"
	msgPlatformUnsupported = "process groups are not supported on this platform yet"
)

// Teardown bounds.
const (
	// killWindow is how long Kill keeps re-sending SIGKILL while any
	// process of the runtime's tree survives.
	killWindow = 2 * time.Second
	// killResendInterval is the pause between SIGKILL rounds.
	killResendInterval = 50 * time.Millisecond
	// stderrDrainBound is how long Release waits for standard error to
	// reach end of file before closing it; a descendant may hold it open.
	stderrDrainBound = time.Second
	// reapBound is how long Release waits for the reaper. Release runs
	// after Kill, so the child is dead or about to be reaped.
	reapBound = time.Second
	// maxLoggedStderrLine caps one standard-error line logged at Debug.
	maxLoggedStderrLine = 1 << 10
)

// sigKind is a teardown signal, named independently of the platform.
type sigKind int

const (
	// sigTerm asks a process to exit (SIGTERM).
	sigTerm sigKind = iota
	// sigKill ends it (SIGKILL).
	sigKill
)

// process is a started runtime. It implements ports.Process; its streams
// and exit value are procio's.
type process struct {
	*procio.Streams

	logger *slog.Logger
	leader *leader // the leader; a signal through it never reaches a reused PID
	pid    int
	pgid   int
	tree   *tree         // the contained tree, nil without containment
	plat   *platformProc // platform state (platform_*.go); nil on Unix

	killWindow     time.Duration
	resendInterval time.Duration
	spare          func(pid int) bool // tests only: PIDs never signalled by PID

	reaperDone chan struct{} // closed when the reaper goroutine returns
	// unguard takes the runtime off the warden's list once the teardown
	// killed its tree (warden_unix.go).
	unguard func()

	releaseOnce sync.Once
	releaseErr  error
}

var _ ports.Process = (*process)(nil)

// start creates the pipes, starts the plan's program with env and starts
// the process's two goroutines.
func start(ctx context.Context, l *Launcher, pl *plan, env []string) (*process, error) {
	if err := platformCheck(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
	}
	var tr *tree
	if l.contain {
		t, err := newTree(l.logger)
		if err != nil {
			l.unsupportedOnce.Do(func() {
				l.logger.Warn("process containment is unavailable", slog.String("error", err.Error()))
			})
		} else {
			if l.scanTable {
				t.scanWholeTable()
			}
			tr = t
		}
	}

	path, args := pl.path, pl.args
	if pl.sandbox != nil {
		path, args = pl.sandbox.wrap(pl.path, pl.args, pl.dir, env)
	}
	pipes, err := procio.OpenPipes()
	if err != nil {
		return nil, err
	}

	// The Cmd is built by hand: exec.Command would search PATH again, and
	// the pipes are *os.File values, so exec starts no copying goroutines
	// and the child is reaped without waiting on any pipe. os/exec keeps
	// the last of duplicate variables, so env overrides the inherited
	// environment and the containment tag overrides both.
	cmdEnv := append(os.Environ(), env...)
	attr := sysProcAttr()
	pidfd := requestLeaderHandle(attr)
	if tr != nil {
		cmdEnv = append(cmdEnv, tr.envEntry())
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string(nil), args...),
		Env:         cmdEnv,
		Dir:         pl.dir,
		Stdin:       pipes.StdinR,
		Stdout:      pipes.StdoutW,
		Stderr:      pipes.StderrW,
		SysProcAttr: attr,
	}
	if err := startOffMainThread(cmd.Start); err != nil {
		pipes.CloseAll()
		return nil, domain.WrapError(domain.KindPortExit, msgStartFailed, err)
	}
	ld := newLeader(cmd.Process, pidfd)
	// Platform step after the start (platform_*.go): none on Unix; on
	// Windows the job assignment and the resume of the suspended child.
	plat, err := startPlatform(ctx, l, cmd)
	if err != nil {
		ld.release()
		pipes.CloseAll()
		return nil, err
	}
	noteLeader(ld.pid)
	entry := ""
	if tr != nil {
		entry = tr.envEntry()
	}
	// From here on the runtime's group (and tagged tree) goes when this
	// process goes, however it goes (docs/behaviour.md#containment).
	unguard := guard(l.logger, ld.pid, entry)
	// The child holds its own copies now; keeping ours would stop standard
	// output and error from ever reaching end of file.
	pipes.CloseChildEnds()

	if tr != nil {
		// Before the reaper starts: the leader cannot have been reaped
		// yet, so its /proc entry is there to be read.
		tr.attach(ld.pid, ld.pid)
	}

	p := &process{
		logger:         l.logger,
		leader:         ld,
		pid:            ld.pid,
		pgid:           ld.pid, // Setpgid with Pgid 0: the child leads its group
		tree:           tr,
		plat:           plat,
		killWindow:     l.killWindow,
		resendInterval: l.resendInterval,
		spare:          l.spare,
		reaperDone:     make(chan struct{}),
		unguard:        unguard,
	}
	p.Streams = pipes.Streams(p.stderrSink)
	go p.reap()
	return p, nil
}

// reap waits for the direct child, records how it ended and closes exited.
func (p *process) reap() {
	defer close(p.reaperDone)
	p.SetExit(p.leader.wait(func(reap func()) { forgetLeader(p.pid, reap) }))
}

// stderrSink logs standard-error lines at Debug besides keeping the tail,
// when Debug is enabled.
func (p *process) stderrSink(tail io.Writer) io.Writer {
	if !p.logger.Enabled(context.Background(), slog.LevelDebug) {
		return tail
	}
	return &lineLogger{tail: tail, logger: p.logger, pid: p.pid}
}

// Identity names the leader by its process ID.
func (p *process) Identity() ports.Identity { return ports.Identity{PID: p.pid} }

// Terminate sends SIGTERM to the process group and to the leader by its
// PID (a leader may have left its group), and with containment to every
// process of the tree found. A group or leader that no longer exists is
// not an error.
func (p *process) Terminate() error {
	_, _, err := p.signalAll(sigTerm)
	return err
}

// Kill sends SIGKILL to the process group, the leader and (with
// containment) every process of the tree, and re-sends it every
// resendInterval until none is alive or killWindow has passed. Zombies
// count as gone; with containment a round also reaps the tree's orphans
// reparented here, and one more round runs while a zombie is about to be
// reparented. What is still alive after the window is logged once at Warn
// and returned as a *domain.SurvivorsError.
func (p *process) Kill() error {
	deadline := time.Now().Add(p.killWindow)
	var firstErr error
	for {
		treeLive, pending, err := p.signalAll(sigKill)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		survivors := p.survivors(treeLive)
		if len(survivors) == 0 && !pending {
			return nil
		}
		if !time.Now().Before(deadline) {
			if len(survivors) == 0 {
				return nil // only zombies left, which count as gone
			}
			return p.reportSurvivors(survivors, firstErr)
		}
		time.Sleep(p.resendInterval)
	}
}

// signalAll sends sig to the group, to the leader by PID and, with
// containment, to the rest of the tree. It returns the processes of the
// tree that were alive when it looked, whether a zombie of the tree is
// about to become this process's to reap (see tree.signal), and the
// errors of the signals that failed for another reason than the target
// being gone.
func (p *process) signalAll(sig sigKind) ([]domain.Survivor, bool, error) {
	var errs []error
	if err := p.plat.signalGroup(p.pgid, sig); err != nil {
		errs = append(errs, fmt.Errorf("localexec: signal process group %d: %w", p.pgid, err))
	}
	if p.pid > 1 && signalsLeader(sig) && (p.spare == nil || !p.spare(p.pid)) {
		// After the reaper's wait this reaches no process, never whatever
		// process reuses the PID.
		if err := p.leader.signal(sig); err != nil {
			errs = append(errs, fmt.Errorf("localexec: signal process %d: %w", p.pid, err))
		}
	}
	var live []domain.Survivor
	var pending bool
	if p.tree != nil {
		var err error
		live, pending, err = p.tree.signal(sig, p.spare)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return live, pending, errors.Join(errs...)
}

// survivors merges what is alive of the group, the leader and the tree,
// in PID order.
func (p *process) survivors(treeLive []domain.Survivor) []domain.Survivor {
	byPID := map[int]domain.Survivor{}
	for _, s := range treeLive {
		byPID[s.PID] = s
	}
	// A walked tree holds every live member of the group already; only
	// without one is the group looked up on its own.
	if p.tree == nil || !p.tree.walks() {
		for _, pid := range p.plat.groupSurvivors(p.pgid) {
			if _, ok := byPID[pid]; !ok {
				byPID[pid] = domain.Survivor{PID: pid, Name: commandName(pid)}
			}
		}
	}
	if _, ok := byPID[p.pid]; !ok && p.leaderAlive() {
		byPID[p.pid] = domain.Survivor{PID: p.pid, Name: commandName(p.pid)}
	}
	out := make([]domain.Survivor, 0, len(byPID))
	for _, s := range byPID {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b domain.Survivor) int { return a.PID - b.PID })
	return out
}

// leaderAlive reports whether the leader has neither been reaped nor
// become a zombie.
func (p *process) leaderAlive() bool {
	select {
	case <-p.Exited():
		return false
	default:
	}
	return processAlive(p.pid)
}

// reportSurvivors logs the survivors once at Warn and returns them as the
// error. cause is the first signal that failed, if any.
func (p *process) reportSurvivors(survivors []domain.Survivor, cause error) error {
	pids := make([]int, len(survivors))
	names := make([]string, len(survivors))
	for i, s := range survivors {
		pids[i], names[i] = s.PID, s.Name
	}
	attrs := []any{
		slog.Int("pid", p.pid),
		slog.Int("pgid", p.pgid),
		slog.Bool("contained", p.tree != nil),
		slog.Duration("kill_window", p.killWindow),
		slog.Any("survivor_pids", pids),
		slog.Any("survivor_names", names),
	}
	if cause != nil {
		attrs = append(attrs, slog.String("signal_error", cause.Error()))
	}
	p.logger.Warn("agent runtime processes survived the force kill", attrs...)
	return &domain.SurvivorsError{Survivors: survivors}
}

// Release closes standard input, drains standard error for up to
// stderrDrainBound (then closes it, since a descendant may hold it open),
// waits up to reapBound for the reaper, and closes every remaining pipe.
// It never blocks indefinitely. Later calls return the first call's
// result.
func (p *process) Release() error {
	p.releaseOnce.Do(func() {
		err := p.Streams.Release(p.reaperDone, reapBound, stderrDrainBound, fmt.Sprintf("process %d", p.pid))
		if !procio.Closed(p.reaperDone) {
			p.logger.Warn("agent process not reaped at release", slog.Int("pid", p.pid))
		}
		p.plat.release()
		p.unguard()
		if err != nil {
			err = fmt.Errorf("localexec: %w", err)
		}
		p.releaseErr = err
	})
	return p.releaseErr
}

// lineLogger keeps standard error in the tail and logs its lines at
// Debug. Only the copier goroutine uses it.
type lineLogger struct {
	tail   io.Writer
	logger *slog.Logger
	pid    int
	buf    []byte
	cut    bool
}

// Write splits b into lines and logs each complete one.
func (l *lineLogger) Write(b []byte) (int, error) {
	_, _ = l.tail.Write(b)
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.add(b)
			break
		}
		l.add(b[:i])
		l.Flush()
		b = b[i+1:]
	}
	return n, nil
}

func (l *lineLogger) add(b []byte) {
	if room := maxLoggedStderrLine - len(l.buf); len(b) > room {
		b = b[:room]
		l.cut = true
	}
	l.buf = append(l.buf, b...)
}

// Flush logs the pending line, if any.
func (l *lineLogger) Flush() {
	line := bytes.TrimRight(l.buf, "\r")
	if len(line) > 0 || l.cut {
		l.logger.Debug("agent stderr line", slog.Int("pid", l.pid),
			slog.String("line", string(line)), slog.Bool("cut", l.cut))
	}
	l.buf = l.buf[:0]
	l.cut = false
}
