package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// batchTask is one line of a TASKS.jsonl file (docs/behaviour.md#batch).
type batchTask struct {
	ID        string          `json:"id"`
	Prompt    string          `json:"prompt"`
	Prompts   []string        `json:"prompts"`
	Workspace string          `json:"workspace"`
	Settings  json.RawMessage `json:"settings"`
}

// batchLine is the JSON line of one finished task (docs/behaviour.md#batch).
type batchLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	SessionID string `json:"session_id,omitempty"`
	AgentPID  int    `json:"agent_pid,omitempty"`
	// Host is the SSH host the session ran on; absent for a local one.
	Host      string `json:"host,omitempty"`
	Completed bool   `json:"completed"`
	// TurnResults are the task's turns, each as run's turn_result line.
	TurnResults []turnResultLine `json:"turn_results"`
	// Usage is the task's measured total, absent when no turn was
	// measured; MeasuredTurns counts the turns it sums.
	Usage         *domain.Usage `json:"usage,omitempty"`
	MeasuredTurns int           `json:"measured_turns"`
	// Cost is the task's cost per currency, absent when no turn had one.
	Cost []domain.Cost `json:"cost,omitempty"`
	// Result is the last turn's structured result under an output
	// schema; ResultMissing says why a turn had none
	// (docs/behaviour.md#structured-results).
	Result        json.RawMessage `json:"result,omitempty"`
	ResultMissing string          `json:"result_missing,omitempty"`
	// Stopped says why no further prompt was sent when a ceiling, not a
	// turn's outcome, stopped the task; Notice is a closing remark.
	Stopped string `json:"stopped,omitempty"`
	Notice  string `json:"notice,omitempty"`
	// ErrorKind, Reason and Message say why the task did not complete.
	ErrorKind string `json:"error_kind,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
	// NotStarted reports a task a signal kept from starting.
	NotStarted bool `json:"not_started,omitempty"`
}

// batchFlags are the flags of "acpdrive batch".
type batchFlags struct {
	run        runFlags
	parallel   int
	perProcess int
	keepWarm   time.Duration
}

// newBatchFlagSet defines the flags of "acpdrive batch" into f: run's,
// less those of one session run by hand (prompts, --resume, --fork,
// --verify-credential, --steer-stdin, --quiet, --verbose), and the
// batch's own.
func newBatchFlagSet(f *batchFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	f.run.register(fs)
	f.run.registerSession(fs)
	fs.IntVar(&f.parallel, "parallel", 4, "how many tasks run at a time")
	fs.IntVar(&f.perProcess, "sessions-per-process", 1, "sessions one runtime process carries at once (1: a process per session)")
	fs.DurationVar(&f.keepWarm, "keep-warm", 30*time.Second, "how long a shared runtime process with no session left is kept for the next task (with --sessions-per-process above 1)")
	return fs
}

// readTasks reads a TASKS.jsonl file: one task a line, blank lines skipped.
func readTasks(path string) ([]batchTask, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = file.Close() }()
	var tasks []batchTask
	seen := map[string]int{}
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var t batchTask
		if err := json.Unmarshal([]byte(text), &t); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if t.Prompt != "" {
			t.Prompts = append([]string{t.Prompt}, t.Prompts...)
		}
		if t.ID == "" || len(t.Prompts) == 0 {
			return nil, fmt.Errorf("%s:%d: a task needs an \"id\" and a \"prompt\" or \"prompts\"", path, n)
		}
		if first, dup := seen[t.ID]; dup {
			return nil, fmt.Errorf("%s:%d: the task id %q is already the id of line %d", path, n, t.ID, first)
		}
		seen[t.ID] = n
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no task", path)
	}
	return tasks, nil
}

// batchCommand is "acpdrive batch [flags] TASKS.jsonl": each task a
// session, --parallel at a time, placed on shared runtime processes
// (--sessions-per-process; 1 means a process per session) over the
// --ssh-host pool. A task's failure never stops the others; the exit
// status says whether every task completed (docs/behaviour.md#batch).
func batchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var bf batchFlags
	fs := newBatchFlagSet(&bf)
	help := func(w io.Writer) { batchHelp(fs, w) }
	flagArgs, rest := splitArgs(fs, args)
	err := parseFlags(fs, flagArgs, "batch", stdout, help)
	if err == nil {
		err = bf.run.check("batch")
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	rest = append(rest, fs.Args()...)
	f := &bf.run
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	switch {
	case err != nil:
	case len(rest) != 1:
		err = errors.New("exactly one TASKS.jsonl file is required")
	case bf.parallel < 1 || bf.perProcess < 1:
		err = errors.New("--parallel and --sessions-per-process want 1 or more")
	case bf.keepWarm < 0:
		err = errors.New("--keep-warm: want a duration of 0 or more")
	case f.set["command"] && strings.TrimSpace(f.command) == "":
		err = errors.New("--command: the command is empty (leave --command out to run the built-in reference agent)")
	}
	var tasks []batchTask
	if err == nil {
		tasks, err = readTasks(rest[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive batch: %v\n", err)
		return exitUsage
	}
	cfg, logger, workspace, err := f.resolve(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive batch: %v\n", err)
		return exitUsage
	}
	deps, err := wiring.Resolve(logger, localSettings())
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive batch: %v\n", err)
		return exitUsage
	}
	tasksDir, err := filepath.Abs(filepath.Dir(rest[0]))
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive batch: %v\n", err)
		return exitUsage
	}
	base := app.Options{Settings: f.settings(cfg), Workspace: workspace}
	deps.Apply(&base)
	if f.noMeasure {
		// The runtime's facts (its usage a running total) still hold:
		// they are the table of runtime facts, not a source's (docs/behaviour.md#token-accounting).
		base.MeasurementSources = nil
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	board := newBatchBoard(tasks, f.json, stdout, stderr)
	var watching sync.WaitGroup
	watching.Add(1)
	go func() {
		defer watching.Done()
		select {
		case <-sigs:
			board.interrupted()
			cancel() // no task starts any more; the running turns are cancelled
		case <-ctx.Done():
		}
	}()
	r := &batchRunner{
		flags: f, cfg: cfg, base: base, tasksDir: tasksDir, board: board,
		placer: newPlacer(cfg, f.sshTransport == "native", logger, base, bf.perProcess, bf.keepWarm, board.warn),
	}
	var (
		mu                      sync.Mutex
		failed, missing         bool
		mistake                 bool // a task's configuration was the person's mistake
		wg                      sync.WaitGroup
		slots                   = make(chan struct{}, bf.parallel)
		interruptedBeforeStarts []batchTask
	)
	for i, task := range tasks {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			interruptedBeforeStarts = tasks[i:]
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			line := r.run(ctx, task)
			mu.Lock()
			failed = failed || !line.Completed
			missing = missing || line.ResultMissing != ""
			mistake = mistake || line.Reason == string(domain.ReasonConfigurationInvalid)
			mu.Unlock()
			board.finish(line)
		}()
	}
	wg.Wait()
	for _, task := range interruptedBeforeStarts {
		failed = true
		board.finish(batchLine{Type: "task_result", ID: task.ID, TurnResults: []turnResultLine{},
			ErrorKind: string(domain.KindTurnCancelled), Message: msgBatchInterrupted, NotStarted: true})
	}
	stopCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopGrace+stopMargin)
	defer stop()
	if err := r.placer.close(stopCtx); err != nil && logger != nil {
		logger.Warn("teardown reported", "error", err)
	}
	cancel()
	watching.Wait()
	board.close()
	switch {
	case mistake:
		// A task's settings or workspace were the person's mistake: a
		// configuration error (docs/behaviour.md#batch).
		return exitUsage
	case failed:
		return exitTurnFailed
	case missing:
		return exitResultMissing
	}
	return exitOK
}

// msgBatchInterrupted is the message of a task that a signal kept from
// starting.
const msgBatchInterrupted = "interrupted before the task started"

// batchRunner runs the tasks of one batch.
type batchRunner struct {
	flags    *runFlags
	cfg      domain.Config // the flags' (and --workflow's) configuration
	base     app.Options   // the flags' options, wired
	tasksDir string        // against which a task's relative paths resolve
	board    *batchBoard
	placer   *placer
}

// run runs one task: its configuration (the flags', its settings over
// them), its session placed, one turn per prompt until one does not
// complete or a ceiling is reached, the session stopped. It never fails
// the batch: whatever went wrong is in the line.
func (r *batchRunner) run(ctx context.Context, task batchTask) batchLine {
	line := batchLine{Type: "task_result", ID: task.ID, TurnResults: []turnResultLine{}}
	fail := func(err error) batchLine {
		line.Completed = false
		line.Message = failureText(err)
		if k, ok := domain.KindOf(err); ok {
			line.ErrorKind = string(k)
		}
		line.Reason = string(startReason(err))
		return line
	}
	r.board.starting(task.ID)
	cfg, opts, err := r.taskOptions(task)
	if err != nil {
		return fail(err)
	}
	sess, err := r.placer.start(ctx, opts)
	if err != nil {
		return fail(err)
	}
	defer func() { r.placer.done(sess) }()
	r.board.running(task.ID, sess.Host(), len(task.Prompts))

	budget := newRunBudgets(cfg)
	line.Completed = true
	for i, prompt := range task.Prompts {
		if msg := budget.reached(); msg != "" {
			// A ceiling stops the task before the next prompt
			// (docs/behaviour.md#token-accounting).
			line.Completed, line.Stopped, line.Message = false, msg, msg
			break
		}
		r.board.turn(task.ID, i+1)
		var res domain.TurnResult
		res, sess = r.turn(ctx, sess, prompt, i == len(task.Prompts)-1, cfg, opts)
		budget.add(res)
		exit := ""
		if res.Err != nil && res.Err.Kind == domain.KindPortExit {
			exit, _ = sess.RuntimeExit()
		}
		line.TurnResults = append(line.TurnResults, newTurnResultLine(i+1, res, exit, res.CancelUnanswered))
		r.board.turnEnded(task.ID, budget)
		line.Result = res.Result
		if res.ResultMissing != "" {
			line.ResultMissing = res.ResultMissing
		}
		if res.Outcome != domain.OutcomeCompleted {
			line.Completed = false
			line.Message = res.Message()
			if res.Err != nil {
				line.ErrorKind = string(res.Err.Kind)
			}
			if exit != "" {
				line.Message += "; the runtime exited: " + exit
			}
			break
		}
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopGrace+stopMargin)
	defer cancel()
	if err := sess.Stop(stopCtx); err != nil {
		r.board.warn(fmt.Sprintf("task %s: teardown reported: %v", task.ID, err))
	}
	line.SessionID, line.AgentPID, line.Host = sess.ID(), sess.PID(), sess.Host()
	if budget.tokens.Measured > 0 {
		used := budget.tokens.Used
		line.Usage = &used
	}
	line.MeasuredTurns = budget.tokens.Measured
	line.Cost = budget.cost.Spent
	line.Notice = budget.unbounded()
	return line
}

// taskOptions is a task's configuration and options: the flags', then
// the task's settings (the WORKFLOW.md agent keys) over them, its
// workspace (relative: against the current directory) and output schema.
// A configuration error is agent_not_found, reason configuration_invalid.
func (r *batchRunner) taskOptions(task batchTask) (domain.Config, app.Options, error) {
	cfg := r.cfg
	if len(task.Settings) > 0 {
		var findings []domain.Finding
		cfg, findings = config.ApplyAgent(cfg, task.Settings, r.tasksDir)
		var errs []string
		for _, f := range findings {
			if f.Severity == domain.SeverityError {
				errs = append(errs, f.Message)
			} else {
				r.board.warn(fmt.Sprintf("task %s: %s %s: %s", task.ID, f.Severity, f.Check, f.Message))
			}
		}
		if len(errs) > 0 {
			return cfg, app.Options{}, configInvalid(errors.New("settings: " + strings.Join(errs, "; ")))
		}
	}
	settings, err := withOutputSchema(r.flags.settings(cfg), cfg)
	if err != nil {
		return cfg, app.Options{}, configInvalid(err)
	}
	opts := r.base
	opts.Settings = settings
	if task.Workspace != "" {
		if opts.Workspace, err = localWorkspace(cfg, task.Workspace); err != nil {
			return cfg, app.Options{}, configInvalid(err)
		}
	}
	if err := checkAdditionalDirectories(cfg); err != nil {
		return cfg, app.Options{}, err
	}
	return cfg, opts, nil
}

// turn runs one prompt, sent again after a retryable failure up to
// agent.max_retries times (app.Retrier: a session whose process is gone is
// resumed on a process of its own on the same host); the last prompt asks
// for the structured result (promptTurn).
func (r *batchRunner) turn(ctx context.Context, sess *app.Session, prompt string, last bool, cfg domain.Config, opts app.Options) (domain.TurnResult, *app.Session) {
	var rt *app.Retrier
	if cfg.MaxRetries > 0 {
		opts.Launcher = r.placer.launcherOf(sess, opts)
		rt = &app.Retrier{Policy: app.RetryPolicy{MaxRetries: cfg.MaxRetries, MaxBackoff: cfg.MaxRetryBackoff}, Options: opts}
	}
	res, next, err := promptTurn(ctx, sess, prompt, last, rt)
	if err != nil {
		r.board.warn(fmt.Sprintf("the retry could not resume the session: %v", err))
	}
	if next != sess {
		r.placer.moved(sess, next)
	}
	return res, next
}

// failureText is an error's message: an AgentError's own, else the error's.
func failureText(err error) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}
