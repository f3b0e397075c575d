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
	"strings"
	"sync"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// batchTask is one line of a TASKS.jsonl file (docs/behaviour.md#runtime-host).
type batchTask struct {
	ID        string          `json:"id"`
	Prompt    string          `json:"prompt"`
	Prompts   []string        `json:"prompts"`
	Workspace string          `json:"workspace"`
	Settings  json.RawMessage `json:"settings"`
}

// batchTurn is one turn of a finished task, as its JSON line shows it.
type batchTurn struct {
	Outcome   string        `json:"outcome"`
	Reply     string        `json:"reply,omitempty"`
	ErrorKind string        `json:"error_kind,omitempty"`
	Message   string        `json:"message,omitempty"`
	Usage     *domain.Usage `json:"usage,omitempty"`
}

// batchLine is the JSON line of one finished task.
type batchLine struct {
	Type        string         `json:"type"`
	ID          string         `json:"id"`
	SessionID   string         `json:"session_id,omitempty"`
	AgentPID    int            `json:"agent_pid,omitempty"`
	Host        string         `json:"host,omitempty"`
	Completed   bool           `json:"completed"`
	TurnResults []batchTurn    `json:"turn_results"`
	Totals      *domain.Totals `json:"totals,omitempty"`
	ErrorKind   string         `json:"error_kind,omitempty"`
	Message     string         `json:"message,omitempty"`
}

// readTasks reads a TASKS.jsonl file: one task a line, blank lines skipped.
func readTasks(path string) ([]batchTask, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = file.Close() }()
	var tasks []batchTask
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
		tasks = append(tasks, t)
	}
	return tasks, sc.Err()
}

// batchCommand is "acpdrive batch [flags] TASKS.jsonl": each task a
// session, --parallel at a time, placed on shared runtime processes
// (--sessions-per-process; 1 means a process per session). A task's
// failure never stops the others; the exit status is 0 when every task
// completed, 1 otherwise (docs/behaviour.md#runtime-host).
func batchCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	f.register(fs)
	parallel := fs.Int("parallel", 4, "how many tasks run at a time")
	perProcess := fs.Int("sessions-per-process", 1, "sessions one runtime process carries (1: a process per session)")
	help := func(w io.Writer) {
		fmt.Fprintln(w, "usage: acpdrive batch [flags] TASKS.jsonl")
		printDefaults(fs, w)
	}
	flagArgs, rest := splitArgs(fs, args)
	err := parseFlags(fs, flagArgs, "batch", stdout, help)
	if err == nil {
		err = f.check("batch")
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	rest = append(rest, fs.Args()...)
	switch {
	case err != nil:
	case len(rest) != 1:
		err = errors.New("exactly one TASKS.jsonl file is required")
	case *parallel < 1 || *perProcess < 1:
		err = errors.New("--parallel and --sessions-per-process want 1 or more")
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
	base := app.Options{Settings: f.settings(cfg), Workspace: workspace}
	deps.Apply(&base)
	f.applyLauncher(&base, cfg, logger)
	var host *app.Host
	if *perProcess > 1 {
		if host, err = app.NewHost(base, app.HostOptions{SessionsPerProcess: *perProcess}); err != nil {
			fmt.Fprintf(stderr, "acpdrive batch: %v\n", err)
			return exitUsage
		}
	}
	var (
		mu     sync.Mutex
		failed bool
		wg     sync.WaitGroup
	)
	slots := make(chan struct{}, *parallel)
	for _, task := range tasks {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			line := runTask(ctx, host, base, task, cfg)
			mu.Lock()
			defer mu.Unlock()
			failed = failed || !line.Completed
			if f.json {
				writeJSON(stdout, line)
				return
			}
			state := "completed"
			if !line.Completed {
				state = "failed: " + line.Message
			}
			fmt.Fprintf(stdout, "task %s: %s (%d turns, session %s)\n", line.ID, state, len(line.TurnResults), line.SessionID)
		}()
	}
	wg.Wait()
	if host != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopGrace+stopMargin)
		defer cancel()
		if err := host.Close(stopCtx); err != nil && logger != nil {
			logger.Warn("teardown reported", "error", err)
		}
	}
	if failed {
		return exitTurnFailed
	}
	return exitOK
}

// runTask runs one task's session: started (on host when not nil), one
// turn per prompt until one does not complete, stopped.
func runTask(ctx context.Context, host *app.Host, base app.Options, task batchTask, cfg domain.Config) batchLine {
	line := batchLine{Type: "task_result", ID: task.ID, TurnResults: []batchTurn{}}
	if len(task.Settings) > 0 && string(task.Settings) != "null" {
		line.ErrorKind, line.Message = string(domain.KindAgentNotFound), "per-task \"settings\" are not offered yet"
		return line
	}
	opts := base
	if task.Workspace != "" {
		opts.Workspace = task.Workspace
	}
	var sess *app.Session
	var err error
	if host != nil {
		sess, err = host.Start(ctx, opts)
	} else {
		sess, err = app.Start(ctx, opts)
	}
	if err != nil {
		line.Message = failureText(err)
		if k, ok := domain.KindOf(err); ok {
			line.ErrorKind = string(k)
		}
		return line
	}
	line.SessionID, line.AgentPID, line.Host = sess.ID(), sess.PID(), sess.Host()
	line.Completed = true
	for _, prompt := range task.Prompts {
		res := sess.Turn(ctx, prompt)
		turn := batchTurn{Outcome: string(res.Outcome), Reply: res.Reply, Usage: res.Usage}
		if res.Err != nil {
			turn.ErrorKind, turn.Message = string(res.Err.Kind), res.Err.Message
		}
		line.TurnResults = append(line.TurnResults, turn)
		if res.Outcome != domain.OutcomeCompleted {
			line.Completed = false
			line.ErrorKind, line.Message = turn.ErrorKind, turn.Message
			break
		}
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopGrace+stopMargin)
	defer cancel()
	_ = sess.Stop(stopCtx)
	totals := sess.Totals()
	line.Totals = &totals
	return line
}

// failureText is an error's message: an AgentError's own, else the error's.
func failureText(err error) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}
