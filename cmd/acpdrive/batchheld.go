package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// A batch that survives its own death (docs/behaviour.md#batch-journal):
// with --journal every task runs held, as run --hold runs its session,
// and its state is recorded before each step that cannot be taken twice;
// batch --resume DIR prints the finished tasks' lines again, continues
// the running ones through their holders and starts the rest.

// msgResumedPromptsNotSent is a resumed task's message when prompts after
// the turn under way had not been sent: a resumed task continues only
// that turn (docs/behaviour.md#batch-journal).
const msgResumedPromptsNotSent = "the batch was resumed after turn %d of %d was sent: a resumed task continues only the turn under way, so prompts %d to %d were not sent"

// heldAttachBound bounds the wait for a holder to end once its session
// was closed or it was asked to end.
const heldAttachBound = 15 * time.Second

// registerJournal defines --journal, --resume and --hold-lease.
func (bf *batchFlags) registerJournal(fs *flag.FlagSet) {
	fs.StringVar(&bf.journal, "journal", "", "record each task's state in `DIR` and run every task held, so that a batch killed midway can be resumed (docs/behaviour.md#batch-journal)")
	fs.StringVar(&bf.resumeDir, "resume", "", "resume the batch whose journal is `DIR`: finished tasks' lines printed again, running ones continued, pending ones started (give no TASKS file and no other flag)")
	fs.DurationVar(&bf.run.hold.lease, "hold-lease", defaultHoldLease, "with --journal: how long a task's held session is kept with no batch attached before its runtime is stopped")
}

// resumedArgs turns "batch --resume DIR" into the batch's own arguments,
// read from its journal (its flags, then the journal's copy of its TASKS
// file), and enters the directory the batch ran in. Other arguments are
// returned as they are, with no journal.
func resumedArgs(args []string) ([]string, *batchJournal, error) {
	var probe batchFlags
	fs := newBatchFlagSet(&probe)
	fs.SetOutput(io.Discard)
	flagArgs, rest := splitArgs(fs, args)
	if fs.Parse(flagArgs) != nil || probe.resumeDir == "" {
		return args, nil, nil // the batch's own parse reports any error
	}
	others := false
	fs.Visit(func(fl *flag.Flag) { others = others || fl.Name != "resume" })
	if len(rest)+fs.NArg() > 0 {
		return nil, nil, configInvalid(errors.New("--resume takes the tasks from its journal: give no TASKS file"))
	}
	if others {
		return nil, nil, configInvalid(errors.New("--resume takes the batch's flags from its journal: give --resume DIR alone"))
	}
	dir, err := filepath.Abs(probe.resumeDir)
	if err != nil {
		return nil, nil, err
	}
	j, err := openJournal(dir)
	if err != nil {
		return nil, nil, err
	}
	// The batch's relative paths (its flags', its tasks' workspaces) are
	// the directory's it ran in.
	if err := os.Chdir(j.meta.Cwd); err != nil {
		return nil, nil, fmt.Errorf("--resume: the batch's directory: %w", err)
	}
	return append(append([]string{}, j.meta.Args...), j.tasksPath()), j, nil
}

// journalRefusal is why the batch's flags cannot run with --journal: a
// runtime at a URL or on SSH hosts (held sessions are local), shared
// processes (a held session is a process of its own).
func journalRefusal(bf *batchFlags, cfg domain.Config) error {
	switch {
	case bf.journal == "":
		return nil
	case bf.run.session.url.url != "" || cfg.URL != "":
		return configInvalid(errors.New("--journal and --url are exclusive: a runtime at a URL is held by its server"))
	case cfg.Remote():
		return configInvalid(errors.New("--journal over SSH is not built yet: journal a local batch"))
	case bf.perProcess > 1:
		return configInvalid(errors.New("--journal and --sessions-per-process above 1 are exclusive: every journaled task is held on a process of its own"))
	case bf.run.hold.lease <= 0:
		return configInvalid(errors.New("--hold-lease must be above zero"))
	}
	return nil
}

// heldTask is a journaled task's held run: its holder, the fleet of that
// one host, and its record.
type heldTask struct {
	j     *batchJournal
	h     *held
	fleet *app.Fleet

	rec     journalTask
	session *app.Session
	err     error // the journal could not be written: no prompt was sent
}

// runTask runs one task of the batch: as batch runs it, or, with a
// journal, held and recorded, or resumed from its record.
func (r *batchRunner) runTask(ctx context.Context, task batchTask) batchLine {
	if r.journal == nil {
		return r.run(ctx, task)
	}
	rec, ok, err := r.journal.read(task.ID)
	var line batchLine
	switch {
	case err != nil:
		line = batchLine{Type: "task_result", ID: task.ID, TurnResults: []turnResultLine{},
			ErrorKind: string(domain.KindPortExit), Message: "the journal: " + err.Error()}
	case ok && rec.State == journalRunning:
		line = r.resumeTask(ctx, task, rec)
	default:
		if ok { // starting: no prompt was sent; its holder, if any, is ended
			releaseHolder(rec)
		}
		line = r.run(ctx, task)
	}
	if line.TurnResults == nil {
		line.TurnResults = []turnResultLine{}
	}
	done := rec
	done.ID, done.State, done.TurnResults, done.Line = task.ID, journalFinished, line.TurnResults, &line
	done.Turn = max(done.Turn, len(line.TurnResults))
	if err := r.journal.write(done); err != nil {
		r.board.warn(fmt.Sprintf("task %s: the journal could not record its end: %v", task.ID, err))
	}
	return line
}

// startHeldTask starts task's holder (recording it first) and returns
// the fleet of that one host; opts' command becomes the holder's URL.
func (r *batchRunner) startHeldTask(ctx context.Context, task batchTask, cfg domain.Config, opts *app.Options, target batchTarget) (*heldTask, error) {
	switch {
	case target.url != "":
		return nil, configInvalid(errors.New("--journal and a task's agent.url are exclusive: a runtime at a URL is held by its server"))
	case cfg.Remote():
		return nil, configInvalid(errors.New("--journal over SSH is not built yet: a journaled task runs on this machine"))
	}
	if err := app.CheckLaunch(opts.Launcher, opts.Settings.Command, opts.Workspace); err != nil {
		return nil, err
	}
	t := &heldTask{j: r.journal, rec: journalTask{ID: task.ID, State: journalStarting}}
	if err := t.j.write(t.rec); err != nil {
		return nil, domain.WrapError(domain.KindPortExit, "the journal could not be written", err)
	}
	h, err := launchRecordedHolder(ctx, opts.Settings.Command, opts.Workspace, r.flags.hold.lease, func(dir string, pid int) error {
		t.rec.HolderDir, t.rec.HolderPID = dir, pid
		return t.j.write(t.rec)
	})
	if err != nil {
		return nil, domain.WrapError(domain.KindPortExit, "the holder could not be started", err)
	}
	t.h = h
	l, err := heldLauncher(h.url, filepath.Join(h.dir, holdTokenFile), nil)
	if err == nil {
		t.fleet, err = app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Launcher: l}}, Logger: r.fleets.logger})
	}
	if err != nil {
		t.close(ctx)
		return nil, err
	}
	opts.Settings.Command = []string{h.url}
	return t, nil
}

// heldLauncher dials a holder with the token of its token file (each
// task's own: never through the process's environment), resuming the
// connection resume names when set.
func heldLauncher(url, tokenFile string, resume *netdial.Resume) (*netdial.Launcher, error) {
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, domain.WrapError(domain.KindPortExit, "the held session is gone", err)
	}
	return netdial.New(netdial.Options{
		URL: url, TokenEnv: "the held session's token file",
		Getenv: func(string) string { return strings.TrimSpace(string(token)) },
		Resume: resume,
	})
}

// started notes the session the fleet started.
func (t *heldTask) started(s *app.Session) {
	if t != nil {
		t.session = s
	}
}

// turnStarted records prompt n as sent, before it is: false (the prompt
// not sent) when the record could not be written.
func (t *heldTask) turnStarted(n int) bool {
	if t == nil {
		return true
	}
	t.rec.State, t.rec.Turn, t.rec.SessionRef = journalRunning, n, t.h.reference()
	if t.session != nil {
		t.rec.SessionID = t.session.ID()
	}
	if err := t.j.write(t.rec); err != nil {
		t.err = err
		return false
	}
	return true
}

// turnEnded records the task's turns that ended.
func (t *heldTask) turnEnded(lines []turnResultLine) {
	if t == nil {
		return
	}
	t.rec.TurnResults = append([]turnResultLine(nil), lines...)
	if err := t.j.write(t.rec); err != nil {
		t.err = err
	}
}

// close ends the task's fleet (its session already stopped) and waits,
// bounded, for its holder to end.
func (t *heldTask) close(ctx context.Context) {
	if t == nil {
		return
	}
	if t.fleet != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopMargin)
		defer cancel()
		_ = t.fleet.Close(stopCtx)
	}
	t.h.close()
}

// resumeTask continues a task its record says was running: the turn
// under way through its holder (no prompt sent again), then the task's
// line, as the batch that died would have printed it
// (docs/behaviour.md#batch-journal).
func (r *batchRunner) resumeTask(ctx context.Context, task batchTask, rec journalTask) batchLine {
	line := batchLine{Type: "task_result", ID: task.ID, SessionID: rec.SessionID,
		TurnResults: append([]turnResultLine{}, rec.TurnResults...)}
	n, m := rec.Turn, len(task.Prompts)
	r.board.starting(task.ID)
	r.board.running(task.ID, "", m)
	r.board.turn(task.ID, n)
	defer releaseHolder(rec)
	if len(rec.TurnResults) < n {
		res, err := r.attachTurn(ctx, rec, n)
		if err != nil {
			line.Message = "the held session could not be continued: " + failureText(err)
			line.ErrorKind = string(domain.KindPortExit)
			if k, ok := domain.KindOf(err); ok {
				line.ErrorKind = string(k)
			}
			return line
		}
		line.TurnResults = append(line.TurnResults, newTurnResultLine(n, res, "", res.CancelUnanswered))
		rec.TurnResults = line.TurnResults
		if err := r.journal.write(rec); err != nil {
			r.board.warn(fmt.Sprintf("task %s: the journal could not record its turn: %v", task.ID, err))
		}
	}
	last := line.TurnResults[len(line.TurnResults)-1]
	switch {
	case last.Outcome != string(domain.OutcomeCompleted):
		line.ErrorKind, line.Message = last.ErrorKind, last.Message
	case n < m:
		line.ErrorKind = string(domain.KindPortExit)
		line.Message = fmt.Sprintf(msgResumedPromptsNotSent, n, m, n+1, m)
	default:
		line.Completed = true
	}
	line.Result, line.ResultMissing = last.Result, last.ResultMissing
	for _, t := range line.TurnResults {
		if t.Usage != nil {
			sum := *t.Usage
			if line.Usage != nil {
				sum = line.Usage.Add(*t.Usage)
			}
			line.Usage = &sum
			line.MeasuredTurns++
		}
		if t.Cost != nil {
			line.Cost = addCost(line.Cost, *t.Cost)
		}
	}
	return line
}

// addCost adds c to the total of its currency.
func addCost(costs []domain.Cost, c domain.Cost) []domain.Cost {
	for i := range costs {
		if costs[i].Currency == c.Currency {
			costs[i].Amount += c.Amount
			return costs
		}
	}
	return append(costs, c)
}

// attachTurn follows turn n of the held session rec names to its end, as
// acpdrive attach does: the held messages of the n-1 turns before it are
// skipped.
func (r *batchRunner) attachTurn(ctx context.Context, rec journalTask, n int) (domain.TurnResult, error) {
	ref, err := parseHeldRef(rec.SessionRef)
	if err != nil {
		return domain.TurnResult{}, domain.WrapError(domain.KindPortExit, "the journal's session reference", err)
	}
	l, err := heldLauncher(ref.url, ref.tokenFile, &netdial.Resume{Connection: ref.connection, Cursor: ref.cursor})
	if err != nil {
		return domain.TurnResult{}, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return domain.TurnResult{}, err
	}
	run, err := app.Attach(ctx, app.AttachOptions{
		Launcher: app.SkipTurns(l, n-1), Workspace: wd, StallTimeout: r.cfg.StallTimeout, Logger: r.fleets.logger,
	})
	if len(run.Turns) == 0 {
		if err == nil {
			err = domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult)
		}
		return domain.TurnResult{}, err
	}
	// Given no prompts, Attach follows the turn under way alone.
	return run.Turns[len(run.Turns)-1], nil
}

// finishedFirst shows, through show, the line of every task its journal
// records as finished (a resumed batch prints them again, first), and
// returns the tasks left to run. Without a journal it returns tasks.
func (r *batchRunner) finishedFirst(tasks []batchTask, show func(batchLine)) []batchTask {
	if r.journal == nil {
		return tasks
	}
	var left []batchTask
	for _, t := range tasks {
		rec, ok, err := r.journal.read(t.ID)
		if err == nil && ok && rec.State == journalFinished && rec.Line != nil {
			show(*rec.Line)
			continue
		}
		left = append(left, t)
	}
	return left
}

// refusalText is a refusal as batch prints it: configuration_invalid and
// its message for the person's own mistake, else the error.
func refusalText(err error) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) && ae.Reason == domain.ReasonConfigurationInvalid {
		return string(domain.ReasonConfigurationInvalid) + ": " + ae.Message
	}
	return err.Error()
}
