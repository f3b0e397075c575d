package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/wiring"
)

// runFlags are the flags of "acpdrive run" (probe shares the launch ones).
type runFlags struct {
	command      string
	workspace    string
	readTimeout  time.Duration
	initTimeout  time.Duration
	turnTimeout  time.Duration
	stallTimeout time.Duration
	stopGrace    time.Duration
	json         bool
	logLevel     string
	quiet        bool
	verbose      bool
	promptFiles  []string
	steerStdin   bool

	resume           string
	fork             string
	subagents        bool
	verifyCredential bool
	workflow         string
	maxTokens        int64
	retries          int
	noMeasure        bool
	budgets          budgetFlags

	confirmToolServers        bool
	confirmToolServersTimeout time.Duration
	protocol                  string
	permissions               string
	answers                   string
	outputSchema              string
	outputRetries             int
	outputSchemaTurns         string

	sshHosts     []string
	sshTransport string
	sshConfig    string

	session sessionFlags
	hold    holdFlags

	set map[string]bool // flags given on the command line
}

// register defines the flags that launch a runtime.
func (f *runFlags) register(fs *flag.FlagSet) {
	def := domain.DefaultConfig()
	fs.StringVar(&f.command, "command", "", "the runtime's command line, split like a shell would (quotes respected, no shell run); default: the built-in reference agent")
	fs.StringVar(&f.workspace, "workspace", "", "the directory the runtime works in (default: the current directory)")
	fs.DurationVar(&f.readTimeout, "read-timeout", def.ReadTimeout, "bound of every start-up call but initialize (which waits for the larger of it and 60s), of a turn's acceptance and of the wait after a cancel")
	fs.DurationVar(&f.initTimeout, "init-timeout", 0, "bound of the initialize call (default: the larger of --read-timeout and 60s)")
	fs.DurationVar(&f.stopGrace, "stop-grace", def.StopGrace, "how long the runtime gets to exit after SIGTERM before SIGKILL")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of human output")
	fs.Func("ssh-host", "run the runtime on `HOST` over SSH ([user@]host[:port] or a config alias; repeatable or comma-separated; tried in order)", func(v string) error {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				f.sshHosts = append(f.sshHosts, h)
			}
		}
		return nil
	})
	fs.StringVar(&f.sshTransport, "ssh-transport", "openssh", "SSH transport: openssh (the ssh binary) or native")
	fs.StringVar(&f.sshConfig, "ssh-config", "", "an alternate ssh client config `FILE` (ssh -F)")
	fs.BoolVar(&f.confirmToolServers, "confirm-tool-servers", false, "declare acpdrive's own beacon beside the MCP servers and report whether the runtime starts it (agent-client-protocol.confirm_tool_servers)")
	fs.DurationVar(&f.confirmToolServersTimeout, "confirm-tool-servers-timeout", domain.DefaultConfirmToolServersTimeout, "how long after the session is created the runtime has to start the beacon")
	fs.StringVar(&f.protocol, "protocol", string(domain.ProtocolDefault), "the ACP version to ask for: 1, 2 (the v2 draft) or auto (ask for 2, accept 1 or 2) (agent.protocol)")
	fs.StringVar(&f.permissions, "permissions", string(domain.PresetRefuse), "how permission requests are answered: refuse (every one), read (allow read, search, think), edit (read, and edit, delete, move inside the workspace or an --add-dir) or rules:FILE (an ordered rules file) (agent.permissions)")
	fs.StringVar(&f.answers, "answers", "", "answer the agent's questions (elicitation, form mode) from the answers `FILE`: values by question or field name, schema defaults when it allows them; a question it cannot answer ends the turn needing a person (agent.answers)")
	fs.StringVar(&f.outputSchema, "output-schema", "", "a JSON Schema (draft 2020-12) `FILE` of each turn's result, an object: the agent is asked for it and it is validated (agent.output_schema; --output-schema-turns last asks the last turn only)")
	fs.IntVar(&f.outputRetries, "output-retries", 0, "send up to `N` follow-up prompts asking for a result that did not arrive or did not validate (agent.output_retries)")
	fs.StringVar(&f.outputSchemaTurns, "output-schema-turns", string(domain.ResultTurnsEach), "which turns ask for the result: each (every prompt) or last (the last prompt only; the turns before it carry no instruction and have no result) (agent.output_schema_turns)")
	fs.StringVar(&f.logLevel, "log-level", "", "write structured logs to stderr at this level (debug, info, warn, error)")
	f.session.register(fs)
}

// registerSession defines the flags run and batch share beyond the
// launch ones: the turn bounds, the ceilings, the WORKFLOW.md, retries,
// subagents and measurement.
func (f *runFlags) registerSession(fs *flag.FlagSet) {
	def := domain.DefaultConfig()
	fs.DurationVar(&f.turnTimeout, "turn-timeout", def.TurnTimeout, "bound of one whole turn (0 disables)")
	fs.DurationVar(&f.stallTimeout, "stall-timeout", def.StallTimeout, "longest time a turn may go without an event (0 disables)")
	fs.BoolVar(&f.subagents, "subagents", false, "declare clientCapabilities.subagents: follow each subagent as a child session, its events under its own id and its parent's (agent.subagents)")
	fs.StringVar(&f.workflow, "workflow", "", "take the settings from this WORKFLOW.md `FILE` (flags given here override it)")
	fs.BoolVar(&f.noMeasure, "no-measure", false, "arm no measurement source: the runtime gets no telemetry settings and no turn is measured")
	fs.Int64Var(&f.maxTokens, "max-tokens", 0, "stop before the next prompt once the measured turns used this many tokens in total (0: no ceiling; agent.max_tokens)")
	fs.IntVar(&f.retries, "retries", 0, "send a turn again up to `N` times after a retryable failure, waiting the runtime's retry-after or the back-off (agent.max_retries)")
	f.budgets.register(fs)
}

// newRunFlagSet defines the flags of "acpdrive run" into f.
func newRunFlagSet(f *runFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.register(fs)
	f.registerSession(fs)
	f.session.url.register(fs)
	f.hold.register(fs)
	fs.StringVar(&f.resume, "resume", "", "continue the session with this `ID` saved from an earlier run (falls back to a new session when the runtime cannot)")
	fs.StringVar(&f.fork, "fork", "", "start a new session from the history of the session `ID` (session/fork; fails when the runtime does not advertise it)")
	fs.BoolVar(&f.verifyCredential, "verify-credential", false, "run a short credential-verification session before the working one")
	registerSteerFlag(fs, &f.steerStdin)
	fs.Func("f", "read one prompt from `FILE` (repeatable, one prompt per file, before the PROMPT arguments; - reads standard input)", func(v string) error {
		f.promptFiles = append(f.promptFiles, v)
		return nil
	})
	fs.BoolVar(&f.verbose, "verbose", false, "also print what the summary already says (the declared capability gaps' notice at the start)")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the reply (for pipes); a turn that does not complete is one line on stderr")
	fs.BoolVar(&f.quiet, "q", false, "short for --quiet")
	return fs
}

func parseRunFlags(args []string, stdin io.Reader, stdout io.Writer) (runFlags, []string, error) {
	var f runFlags
	fs := newRunFlagSet(&f)
	help := func(w io.Writer) { runHelp(fs, w) }
	flagArgs, prompts := splitArgs(fs, args)
	if err := parseFlags(fs, flagArgs, "run", stdout, help); err != nil {
		return f, nil, err
	}
	if err := f.check("run"); err != nil {
		return f, nil, err
	}
	prompts = append(prompts, fs.Args()...)
	if err := checkSteerStdin(f.steerStdin, f.promptFiles); err != nil {
		return f, nil, err
	}
	prompts, err := readDashPrompt(prompts, f, stdin)
	if err != nil {
		return f, nil, err
	}
	fromFiles, err := readPromptFiles(f.promptFiles, stdin)
	if err != nil {
		return f, nil, err
	}
	prompts = append(fromFiles, prompts...)
	if len(prompts) == 0 {
		return f, nil, errors.New("at least one PROMPT (or -f FILE) is required")
	}
	if f.quiet && f.json {
		return f, nil, errors.New("--quiet and --json exclude each other")
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.resume != "" && f.fork != "" {
		return f, nil, errors.New("--fork and --resume exclude each other")
	}
	if f.set["command"] && strings.TrimSpace(f.command) == "" {
		return f, nil, errors.New("--command: the command is empty (leave --command out to run the built-in reference agent)")
	}
	return f, prompts, nil
}

// splitArgs separates flags from prompts anywhere on the command line:
// "acpdrive run hello --json" gives the flag --json and the prompt
// "hello". A flag that takes a value takes the next word unless written
// --flag=value. "--" ends the flags: every word after it is a prompt, even
// one that starts with a dash. An unknown flag is left to the flag set,
// which reports it.
func splitArgs(fs *flag.FlagSet, args []string) (flagArgs, prompts []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flagArgs, append(prompts, args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			prompts = append(prompts, a)
			continue
		}
		flagArgs = append(flagArgs, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		fl := fs.Lookup(name)
		if fl == nil || hasValue {
			continue
		}
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i+1 < len(args) {
			i++
			flagArgs = append(flagArgs, args[i])
		}
	}
	return flagArgs, prompts
}

// config builds the domain configuration: the defaults, then the
// WORKFLOW.md when --workflow names one, then the flags given on the
// command line. The result is checked by domain.Config.Validate, the same
// function "acpdrive validate" runs.
//
// The file's own findings (those Config.Validate does not make) are
// judged as "acpdrive validate" judges them; what Config.Validate finds is
// judged on the result, so a flag overrides what the file lacks or gets
// wrong (--command for a file without agent.command). Warnings are
// returned, to be printed as validate prints them.
func (f runFlags) config() (domain.Config, []domain.Finding, error) {
	cfg := domain.DefaultConfig()
	var fileFindings []domain.Finding
	if f.workflow != "" {
		loaded, findings, err := config.Load(f.workflow)
		if err != nil {
			return cfg, nil, fmt.Errorf("--workflow: %w", err)
		}
		fileFindings = withoutFindings(findings, loaded.Validate())
		if domain.HasErrors(fileFindings) {
			return cfg, warningsOf(fileFindings), fmt.Errorf("--workflow %s: %w", f.workflow, domain.FindingsError(fileFindings))
		}
		cfg = loaded
	}
	cfg, err := f.overrides(cfg)
	if err != nil {
		return cfg, warningsOf(fileFindings), err
	}
	var errs []error
	var warnings []domain.Finding
	for _, finding := range append(fileFindings, cfg.Validate()...) {
		if finding.Severity == domain.SeverityError {
			errs = append(errs, errors.New(finding.Message))
		} else if !slices.Contains(warnings, finding) {
			warnings = append(warnings, finding)
		}
	}
	return cfg, warnings, errors.Join(errs...)
}

// warningsOf is the warnings among fs.
func warningsOf(fs []domain.Finding) []domain.Finding {
	var out []domain.Finding
	for _, f := range fs {
		if f.Severity != domain.SeverityError {
			out = append(out, f)
		}
	}
	return out
}

// withoutFindings is fs less every finding in drop.
func withoutFindings(fs, drop []domain.Finding) []domain.Finding {
	var out []domain.Finding
	for _, f := range fs {
		if !slices.Contains(drop, f) {
			out = append(out, f)
		}
	}
	return out
}

// overrides applies the flags given on the command line to cfg.
func (f runFlags) overrides(cfg domain.Config) (domain.Config, error) {
	switch {
	case f.command != "":
		words, err := domain.SplitHostCommandLine(f.command)
		if err != nil {
			return cfg, fmt.Errorf("--command: %w", err)
		}
		cfg.Command = words
	case len(cfg.Command) == 0 && f.workflow == "":
		exe, err := os.Executable()
		if err != nil {
			return cfg, fmt.Errorf("locate the reference agent: %w", err)
		}
		cfg.Command = []string{exe, "agent"}
	}
	for name, apply := range map[string]func(){
		"read-timeout":                 func() { cfg.ReadTimeout = f.readTimeout },
		"turn-timeout":                 func() { cfg.TurnTimeout = f.turnTimeout },
		"stall-timeout":                func() { cfg.StallTimeout = f.stallTimeout },
		"stop-grace":                   func() { cfg.StopGrace = f.stopGrace },
		"max-tokens":                   func() { cfg.MaxTokens = f.maxTokens },
		"retries":                      func() { cfg.MaxRetries = f.retries },
		"subagents":                    func() { cfg.Subagents = f.subagents },
		"confirm-tool-servers":         func() { cfg.ConfirmToolServers = f.confirmToolServers },
		"confirm-tool-servers-timeout": func() { cfg.ConfirmToolServersTimeout = f.confirmToolServersTimeout },
		"protocol":                     func() { cfg.Protocol = f.protocol },
		"output-schema":                func() { cfg.OutputSchema = f.outputSchema },
		"output-retries":               func() { cfg.OutputRetries = f.outputRetries },
		"output-schema-turns":          func() { cfg.OutputSchemaTurns = f.outputSchemaTurns },
	} {
		if f.workflow == "" || f.set[name] {
			apply()
		}
	}
	if f.workflow == "" || f.set["permissions"] {
		p, err := permissionsFlag(f.permissions)
		if err != nil {
			return cfg, err
		}
		cfg.Permissions = p
	}
	if err := answersFlag(&cfg, f.answers); err != nil {
		return cfg, err
	}
	if err := f.budgets.apply(&cfg, f.set, f.workflow != ""); err != nil {
		return cfg, err
	}
	if len(f.sshHosts) > 0 {
		cfg.SSHHosts = f.sshHosts
	}
	if f.sshConfig != "" {
		cfg.SSHConfig = f.sshConfig
	}
	if f.sshTransport != "openssh" && f.sshTransport != "native" {
		return cfg, fmt.Errorf("--ssh-transport %q: want openssh or native", f.sshTransport)
	}
	if err := f.session.apply(&cfg); err != nil {
		return cfg, err
	}
	if err := localAdditionalDirectories(&cfg); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (f runFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	if f.logLevel == "" {
		return nil, nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})), nil
}

// resolve turns the flags into what a launch needs: the configuration,
// the logger (nil: none) and the workspace.
func (f runFlags) resolve(stderr io.Writer) (domain.Config, *slog.Logger, string, error) {
	cfg, warnings, err := f.config()
	for _, w := range warnings {
		// As "acpdrive validate" prints them (docs/behaviour.md#validate-time-checks).
		fmt.Fprintf(stderr, "%s %s: %s\n", w.Severity, w.Check, w.Message)
	}
	if err != nil {
		return cfg, nil, "", err
	}
	logger, err := f.logger(stderr)
	if err != nil {
		return cfg, nil, "", err
	}
	workspace := f.workspace
	if workspace == "" {
		if workspace, err = os.Getwd(); err != nil {
			return cfg, nil, "", err
		}
	}
	if workspace, err = localWorkspace(cfg, workspace); err != nil {
		return cfg, nil, "", err
	}
	return cfg, logger, workspace, nil
}

func runCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, prompts, err := parseRunFlags(args, stdin, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive run: %v\n", err)
		return exitUsage
	}
	cfg, logger, workspace, err := f.resolve(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive run: %v\n", err)
		return exitUsage
	}
	tel, err := telemetryFromEnv(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive run: %v\n", err)
		return exitUsage
	}
	defer tel.shutdown(stderr)
	deps, err := wiring.Resolve(logger, localSettings(), tel.options()...)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive run: %v\n", err)
		return exitUsage
	}

	out := newPrinter(f.json, stdout, stderr)
	if f.quiet {
		out.beQuiet()
	}
	out.verbose = f.verbose
	defer out.close()
	out.bounds = newBoundNames(f, cfg)

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	settings, err := withOutputSchema(f.settings(cfg), cfg)
	if err != nil {
		// A schema file that cannot be read is the person's mistake, as
		// one that does not compile is (docs/behaviour.md#cli).
		out.startupFailed(configInvalid(err), f.settings(cfg))
		return exitUsage
	}
	out.schema = settings.OutputSchema != nil
	opts := app.Options{
		Settings:    settings,
		Workspace:   workspace,
		OnEvent:     out.event,
		OnAgentText: out.text,
		OnToolStart: out.toolStarted,
		OnReadIdle:  out.idle,

		ResumeSessionID:  f.resume,
		ForkSessionID:    f.fork,
		VerifyCredential: f.verifyCredential,
	}
	deps.Apply(&opts)
	f.applyLauncher(&opts, cfg, logger)
	holder, err := f.startHeld(ctx, &opts, cfg, logger, stderr, prompts) // docs/behaviour.md#held-sessions
	defer holder.close()
	if f.noMeasure {
		// The runtime's facts (its usage a running total) still hold:
		// they are the table of runtime facts, not a source's (docs/behaviour.md#token-accounting).
		opts.MeasurementSources = nil
	}
	if err == nil {
		err = checkAdditionalDirectories(cfg)
	}
	var sess *app.Session
	if err == nil {
		sess, err = startInterruptible(ctx, sigs, opts)
	}
	if err != nil {
		out.startupFailed(err, opts.Settings)
		return startExit(err)
	}
	out.host = sess.Host()
	out.resumed(resumeOutcome(sess), sess.ID())

	interrupts := newInterrupter(sigs, sess, cfg.StopGrace+stopMargin, out.interrupted)
	defer interrupts.close()
	if f.steerStdin && !sess.AgentInfo().Advertised.Steering {
		out.warnSteerNotOffered()
	}
	steers := newStdinSteerer(ctx, f.steerStdin, stdin, sess, out.steerNotice)
	defer steers.close()

	code := exitOK
	var end runEnd
	// The library's run drives the prompts (docs/behaviour.md#fleet); a
	// retry that replaces the runtime keeps sess the session to cancel,
	// steer and stop.
	res := app.Run{
		Prompts:  prompts,
		Retry:    app.RetryPolicy{MaxRetries: cfg.MaxRetries, MaxBackoff: cfg.MaxRetryBackoff},
		Ceilings: app.CeilingsOf(cfg),
		OnTurnStart: func(n int, prompt string) bool {
			if interrupts.stopped() {
				return false
			}
			out.turnStart(n, prompt)
			return true
		},
		TurnContext: interrupts.turnContext,
		OnRetry:     func(w app.Retry) { out.retryWait(w, cfg.MaxRetries) },
		OnReplace:   out.replaced,
		OnTurn: func(t app.RunTurn) {
			interrupts.turnDone()
			res := t.Result
			if res.CancelUnanswered && res.Outcome == domain.OutcomeCancelled {
				out.cancelUnanswered(opts.Settings.EffectiveReadTimeout().String())
			}
			// The runtime's exit ended the turn: say how it ended and
			// what it last wrote (docs/behaviour.md#cli).
			out.turnResult(t.N, res, t.RuntimeExit)
			switch {
			case res.Outcome != domain.OutcomeCompleted:
				code = turnExit(res)
			case res.ResultMissing != "":
				code = exitResultMissing // the run goes on; a later failure's status wins
			}
		},
	}.Drive(ctx, sess)
	if res.Stopped != "" {
		// A ceiling stopped the run before the next prompt
		// (docs/behaviour.md#token-accounting).
		end.stopped = res.Stopped
		code = exitTurnFailed
	}
	end.budget = budgetsOf(res.Budgets)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.StopGrace+stopMargin)
	defer cancel()
	stopErr := sess.Stop(stopCtx)
	end.notice = res.Notice
	out.runResult(sess, len(res.Turns), stopErr, end)
	return code
}

// startInterruptible starts the session with a context that the first
// SIGINT or SIGTERM cancels, so a signal during start-up cancels the start
// at once (turn_cancelled, teardown in order, exit 3) instead of waiting
// for the initialize bound. The session is placed by a fleet of one host,
// opts' launcher (docs/behaviour.md#fleet).
func startInterruptible(ctx context.Context, sigs <-chan os.Signal, opts app.Options) (*app.Session, error) {
	startCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-sigs:
			cancel()
		case <-done:
		}
	}()
	defer wg.Wait()
	defer close(done)
	fleet, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Launcher: opts.Launcher}}, Clock: opts.Clock, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	return fleet.Start(startCtx, opts)
}

// applyLauncher puts the SSH launcher into opts for a configuration that
// names SSH hosts: a pool over them, tried in order, the next host taken
// when one cannot be reached (app.Start's failover). A local
// configuration keeps the local launcher of the wiring.
func (f runFlags) applyLauncher(opts *app.Options, cfg domain.Config, logger *slog.Logger) {
	if f.applyURL(opts, cfg, logger) || !cfg.Remote() {
		return
	}
	opts.Launcher = wiring.NewSSHPool(logger, wiring.SSHSettings{
		StrictHostKeyChecking: cfg.SSHStrictHostKeyChecking,
		ConfigFile:            cfg.SSHConfig, PassEnv: cfg.SSHPassEnv, Native: f.sshTransport == "native",
	}, cfg.SSHHosts, 0)
}

// settings is the session's settings: the configuration's, and the
// flags that have no WORKFLOW.md key (--init-timeout).
func (f runFlags) settings(cfg domain.Config) domain.SessionSettings {
	s := settingsOf(cfg)
	s.InitTimeout = f.initTimeout
	return s
}

// withOutputSchema reads the output schema file the configuration names
// (agent.output_schema, --output-schema) into s; Start compiles it
// (docs/behaviour.md#structured-results).
func withOutputSchema(s domain.SessionSettings, cfg domain.Config) (domain.SessionSettings, error) {
	if cfg.OutputSchema == "" {
		return s, nil
	}
	raw, err := os.ReadFile(cfg.OutputSchema)
	if err != nil {
		return s, fmt.Errorf("agent.output_schema: %w", err)
	}
	s.OutputSchema = raw
	return s, nil
}

// settingsOf is the session's settings for the CLI's configuration. The
// CLI reserves no MCP server name of its own: it declares no server
// besides the operator's (and, when asked for, the tool-server beacon,
// whose name is reserved then; docs/behaviour.md#mcp).
func settingsOf(cfg domain.Config) domain.SessionSettings {
	return cfg.SessionSettings()
}

// localSettings are the CLI's local settings: containment, and the
// tool-server beacon re-executed as this very binary's hidden
// "mcp-beacon" subcommand (docs/behaviour.md#tool-server-confirmation).
func localSettings() wiring.LocalSettings {
	s := wiring.LocalSettings{Contain: true}
	if exe, err := os.Executable(); err == nil {
		s.BeaconCommand = []string{exe, mcpbeacon.SubcommandName}
		s.ResultCommand = []string{exe, mcpresult.SubcommandName}
	}
	return s
}

// turnExit is the exit status of a run a turn ended that did not complete:
// exitNeedsPerson for a refusal or a decision only a person can make,
// exitTurnFailed for any other ending.
func turnExit(res domain.TurnResult) int {
	if res.Outcome == domain.OutcomeInputRequired || (res.Err != nil && res.Err.Kind == domain.KindTurnRefused) {
		return exitNeedsPerson
	}
	return exitTurnFailed
}
