package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
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
	// Replacements are the task's retries that replaced its runtime,
	// each saying whether the session was resumed (its history kept) or
	// runs fresh (docs/behaviour.md#fleet).
	Replacements []app.Replacement `json:"replacements,omitempty"`
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
	// journal and resumeDir are --journal and --resume
	// (docs/behaviour.md#batch-journal).
	journal   string
	resumeDir string
}

// newBatchFlagSet defines the flags of "acpdrive batch" into f: run's,
// less those of one session run by hand (prompts, --resume, --fork,
// --verify-credential, --steer-stdin, --quiet, --verbose), and the
// batch's own.
func newBatchFlagSet(f *batchFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	f.run.register(fs)
	f.run.registerSession(fs)
	f.run.session.url.register(fs)
	fs.IntVar(&f.parallel, "parallel", 4, "how many tasks run at a time")
	fs.IntVar(&f.perProcess, "sessions-per-process", 1, "sessions one runtime process carries at once (1: a process per session)")
	fs.DurationVar(&f.keepWarm, "keep-warm", 30*time.Second, "how long a shared runtime process with no session left is kept for the next task (with --sessions-per-process above 1)")
	f.registerJournal(fs)
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
	args, journal, err := resumedArgs(args) // --resume DIR: the journal's batch
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive batch: %s\n", refusalText(err))
		return exitUsage
	}
	defer func() { journal.close() }()
	var bf batchFlags
	fs := newBatchFlagSet(&bf)
	help := func(w io.Writer) { batchHelp(fs, w) }
	flagArgs, rest := splitArgs(fs, args)
	err = parseFlags(fs, flagArgs, "batch", stdout, help)
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
	case bf.resumeDir != "" && journal == nil:
		err = errors.New("--resume takes the batch's flags from its journal: give --resume DIR alone")
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
	if err := journalRefusal(&bf, cfg); err != nil {
		fmt.Fprintf(stderr, "acpdrive batch: %s\n", refusalText(err))
		return exitUsage
	}
	switch {
	case journal != nil:
		journal.indexTasks(tasks)
		tasksDir = journal.meta.TasksDir
	case bf.journal != "":
		dir, err := filepath.Abs(bf.journal)
		if err == nil {
			journal, err = createJournal(dir, flagArgs[:len(flagArgs)-len(fs.Args())], rest[0], tasks)
		}
		if err != nil {
			fmt.Fprintf(stderr, "acpdrive batch: --journal: %v\n", err)
			return exitUsage
		}
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
	fleets := &batchFleets{flags: f, cfg: cfg, logger: logger, base: base, template: app.FleetOptions{
		SessionsPerProcess: bf.perProcess, KeepWarm: bf.keepWarm,
		// A host found unreachable takes no further task of the batch
		// (docs/behaviour.md#batch).
		DownFor: batchDownFor, Logger: logger, OnNotice: board.fleetNotice,
	}}
	r := &batchRunner{flags: f, cfg: cfg, base: base, tasksDir: tasksDir, board: board, fleets: fleets, target: batchTargetOf(f, cfg), journal: journal}
	if _, err := fleets.fleetFor(r.target); err != nil {
		fmt.Fprintf(stderr, "acpdrive batch: %v\n", err)
		return exitUsage
	}
	var (
		mu                      sync.Mutex
		failed, missing         bool
		mistake                 bool // a task's configuration was the person's mistake
		wg                      sync.WaitGroup
		slots                   = make(chan struct{}, bf.parallel)
		interruptedBeforeStarts []batchTask
	)
	tasks = r.finishedFirst(tasks, func(line batchLine) {
		failed = failed || !line.Completed
		missing = missing || line.ResultMissing != ""
		mistake = mistake || line.Reason == string(domain.ReasonConfigurationInvalid)
		board.finish(line)
	})
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
			line := r.runTask(ctx, task)
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
	for _, fleet := range fleets.all() {
		if err := fleet.Close(stopCtx); err != nil && logger != nil {
			logger.Warn("teardown reported", "error", err)
		}
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
	fleets   *batchFleets
	target   batchTarget // the batch's: --url, else agent.url; none: its hosts
	journal  *batchJournal
}

// batchDownFor is how long the batch leaves out a host found
// unreachable: the rest of the batch.
const batchDownFor = time.Duration(1) << 62

// batchHosts are the batch's hosts: this machine, or each --ssh-host once
// with a launcher of its own, in order.
func batchHosts(cfg domain.Config, native bool, logger *slog.Logger, base app.Options) []app.FleetHost {
	if !cfg.Remote() {
		return []app.FleetHost{{Launcher: base.Launcher}}
	}
	var hosts []app.FleetHost
	for _, h := range cfg.SSHHosts {
		if slices.ContainsFunc(hosts, func(fh app.FleetHost) bool { return fh.Name == h }) {
			continue
		}
		hosts = append(hosts, app.FleetHost{Name: h, Launcher: wiring.NewSSHLauncher(logger, wiring.SSHSettings{
			Host: h, StrictHostKeyChecking: cfg.SSHStrictHostKeyChecking,
			ConfigFile: cfg.SSHConfig, PassEnv: cfg.SSHPassEnv, Native: native,
		})})
	}
	return hosts
}

// run runs one task: its configuration (the flags', its settings over
// them), then the library's run over the batch's fleet (its session
// placed, one turn per prompt until one does not complete or a ceiling is
// reached, the session stopped; docs/behaviour.md#fleet). It never fails
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
	cfg, opts, target, err := r.taskOptions(task)
	if err != nil {
		return fail(err)
	}
	var ht *heldTask // with --journal: the task's holder and record (docs/behaviour.md#batch-journal)
	var fleet *app.Fleet
	if r.journal != nil {
		ht, err = r.startHeldTask(ctx, task, cfg, &opts, target)
		defer ht.close(ctx)
		if ht != nil {
			fleet = ht.fleet
		}
	} else {
		fleet, err = r.fleets.fleetFor(target)
	}
	if err != nil {
		return fail(err)
	}
	res := fleet.Run(ctx, opts, app.Run{
		Prompts:  task.Prompts,
		Retry:    app.RetryPolicy{MaxRetries: cfg.MaxRetries, MaxBackoff: cfg.MaxRetryBackoff},
		Ceilings: app.CeilingsOf(cfg),
		OnStart: func(s *app.Session) {
			host := s.Host()
			if ht != nil {
				ht.started(s)
				host = "" // the holder's runtime is this machine's
			}
			r.board.running(task.ID, host, len(task.Prompts))
		},
		OnTurnStart: func(n int, _ string) bool {
			r.board.turn(task.ID, n)
			return ht.turnStarted(n) // recorded before it is sent
		},
		OnTurn: func(t app.RunTurn) {
			line.TurnResults = append(line.TurnResults, newTurnResultLine(t.N, t.Result, t.RuntimeExit, t.Result.CancelUnanswered))
			ht.turnEnded(line.TurnResults)
			r.board.turnEnded(task.ID, budgetsOf(t.Budgets))
		},
		OnReplace: func(rep app.Replacement) { r.board.warn(fmt.Sprintf("task %s: %s", task.ID, rep.Text())) },
	})
	if res.StartFailed {
		return fail(res.Err)
	}
	line.Completed, line.Result, line.ResultMissing = res.Completed, res.Result, res.ResultMissing
	line.Replacements = res.Replacements
	switch {
	case res.Stopped != "":
		// A ceiling stopped the task before the next prompt
		// (docs/behaviour.md#token-accounting).
		line.Stopped, line.Message = res.Stopped, res.Stopped
	case res.Interrupted && ht != nil && ht.err != nil:
		line.ErrorKind = string(domain.KindPortExit)
		line.Message = "the journal could not record the next prompt, which was not sent: " + ht.err.Error()
	case !res.Completed && len(res.Turns) > 0:
		last := res.Turns[len(res.Turns)-1]
		line.Message = last.Result.Message()
		if last.Result.Err != nil {
			line.ErrorKind = string(last.Result.Err.Kind)
		}
		if last.RuntimeExit != "" {
			line.Message += "; the runtime exited: " + last.RuntimeExit
		}
	}
	if res.StopErr != nil {
		r.board.warn(fmt.Sprintf("task %s: teardown reported: %v", task.ID, res.StopErr))
	}
	line.SessionID, line.AgentPID, line.Host = res.SessionID, res.AgentPID, res.Host
	if ht != nil {
		line.Host = "" // the holder's runtime is this machine's
	}
	if res.Budgets.Tokens.Measured > 0 {
		used := res.Budgets.Tokens.Used
		line.Usage = &used
	}
	line.MeasuredTurns = res.Budgets.Tokens.Measured
	line.Cost = res.Budgets.Cost.Spent
	line.Notice = res.Notice
	return line
}

// taskOptions is a task's configuration and options: the flags', then
// the task's settings (the WORKFLOW.md agent keys) over them, its
// workspace (relative: against the current directory) and output schema,
// and where its runtime is reached (batchurl.go). A configuration error
// is agent_not_found, reason configuration_invalid.
func (r *batchRunner) taskOptions(task batchTask) (domain.Config, app.Options, batchTarget, error) {
	cfg := r.cfg
	if len(task.Settings) > 0 {
		if namesOwnURL(task.Settings) {
			// The task's runtime is at its URL: the flags' command (the
			// built-in reference agent's, by default) is not its.
			cfg.Command = nil
		}
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
			return cfg, app.Options{}, batchTarget{}, configInvalid(errors.New("settings: " + strings.Join(errs, "; ")))
		}
	}
	settings, err := withOutputSchema(r.flags.settings(cfg), cfg)
	if err != nil {
		return cfg, app.Options{}, batchTarget{}, configInvalid(err)
	}
	target, err := r.taskTarget(cfg)
	if err != nil {
		return cfg, app.Options{}, batchTarget{}, err
	}
	opts := r.base
	opts.Settings = settings
	if target.url != "" {
		// The command is not run: it becomes the URL, which the logs
		// name (docs/behaviour.md#network).
		opts.Settings.Command = []string{target.url}
		// Without a workspace given, the one the server announces.
		opts.ServerWorkspace = r.flags.workspace == "" && task.Workspace == ""
	}
	if task.Workspace != "" {
		if opts.Workspace, err = localWorkspace(cfg, task.Workspace); err != nil {
			return cfg, app.Options{}, batchTarget{}, configInvalid(err)
		}
	}
	if err := checkAdditionalDirectories(cfg); err != nil {
		return cfg, app.Options{}, batchTarget{}, err
	}
	return cfg, opts, target, nil
}

// failureText is an error's message: an AgentError's own, else the error's.
func failureText(err error) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}
