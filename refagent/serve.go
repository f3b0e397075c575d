package refagent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// ServeOptions configures [Serve]: one run of the reference agent inside the
// calling process.
type ServeOptions struct {
	// Args are the agent's flags, as for [Main] (without the program name
	// and the "agent" subcommand).
	Args []string
	// Stdin, Stdout and Stderr are the agent's streams. Stdout receives
	// newline-delimited JSON-RPC; an error writing it stops all further
	// output, as a closed pipe does for a real process.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Terminate stands in for SIGTERM: every value received on it is one
	// SIGTERM, and closing it counts as one more (after which it is no
	// longer watched). A nil channel never terminates the agent. As with
	// signals, a SIGTERM that arrives while one is still pending is merged
	// with it.
	Terminate <-chan struct{}
}

// Serve runs the reference agent in the calling process and returns the
// exit code [Main] would have returned: 0 when stdin ends (or ctx is done),
// the code of a scripted exit, 143 on a Terminate (unless SIGTERM is
// ignored, by --ignore-sigterm or the script), 2 on a usage error.
//
// Unlike Main, Serve never touches the process: it installs no signal
// handler (Terminate replaces SIGTERM), never exits, and never starts a
// descendant. A scripted exit (an exit step, Reply.Exit, Reply.ExitAfter)
// only makes Serve return its code; the caller closes the streams as the end
// of a real process would.
//
// Spawn steps need a real process, so Serve refuses them: a script that
// would spawn without being asked to by a prompt (its startup steps, its
// scripted replies or its default turn — for example the scenario
// "orphan-stdout") is rejected up front with exit code 2 and a message on
// Stderr; a named turn that spawns (such as "#orphan-stdout" under any
// built-in scenario) instead writes a message to Stderr at the spawn step
// and exits 2 there.
//
// ctx ending makes Serve return 0 promptly (a forced end: callers that
// emulate SIGKILL cancel ctx and close the streams). Serve returns only once
// its own goroutine watching Terminate has ended; like Main it waits a
// bounded time for the agent's other goroutines, which end once their
// stream writes fail and ctx is done. The goroutine reading Stdin returns
// when Stdin ends or fails (closing a pipe's read end after Serve returns
// ends it).
func Serve(ctx context.Context, o ServeOptions) int {
	stdout, stderr := o.Stdout, o.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	stdin := o.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}

	// Terminate is watched from the start, as Main catches SIGTERM first: a
	// Terminate sent before the script is running is held until it is.
	sigs := make(chan os.Signal, 1)
	stop := make(chan struct{})
	var watch sync.WaitGroup
	if o.Terminate != nil {
		watch.Add(1)
		go func() {
			defer watch.Done()
			forwardTerminate(o.Terminate, sigs, stop)
		}()
	}
	defer func() {
		close(stop)
		watch.Wait()
	}()

	cfg, code, ok := parseServeFlags(o.Args, stdout, stderr)
	if !ok {
		return code
	}
	script := cfg.script
	if where := spawnsUnasked(script); where != "" {
		fmt.Fprintf(stderr, "acpdrive agent: script %q spawns a descendant (%s), which needs a real process: not supported in-process\n", script.Name, where)
		return 2
	}
	script = withoutSpawns(script)

	cfg.script = script
	a, closeLog, code, ok := cfg.agent(stdout, stderr)
	if !ok {
		return code
	}
	defer closeLog()
	return a.run(ctx, stdin, sigs)
}

// agent builds the agent the configuration describes, with its log file
// open; closeLog closes it. ok is false (with the exit code) when the log
// cannot be opened.
func (cfg serveConfig) agent(stdout, stderr io.Writer) (a *agent, closeLog func(), code int, ok bool) {
	a = newAgent(cfg.script, stdout, stderr)
	a.ignoreSigterm = cfg.ignoreSigterm || cfg.script.IgnoreSigterm
	a.protocol = cfg.protocol
	if cfg.logPath == "" {
		return a, func() {}, 0, true
	}
	f, err := os.OpenFile(cfg.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(stderr, "acpdrive agent: open log: %v\n", err)
		return nil, nil, 2, false
	}
	a.log = &eventLog{w: f}
	return a, func() { _ = f.Close() }, 0, true
}

// forwardTerminate turns receives on term into SIGTERMs on sigs, dropping
// one when another is still pending (as signal delivery does), until stop is
// closed or term is closed.
func forwardTerminate(term <-chan struct{}, sigs chan<- os.Signal, stop <-chan struct{}) {
	for {
		select {
		case _, open := <-term:
			select {
			case sigs <- syscall.SIGTERM:
			default:
			}
			if !open {
				return
			}
		case <-stop:
			return
		}
	}
}

// serveConfig is what the flags of an in-process run select.
type serveConfig struct {
	script        *Script
	logPath       string
	ignoreSigterm bool
	protocol      string
}

// parseServeFlags reads the agent's flags (Main and Serve share it). When the run is over
// already (a usage error, --help, --list-scenarios, --print-script) it
// returns ok false and the exit code.
// serveFlags are the flags of "acpdrive agent".
type serveFlags struct {
	scenario, script, log, agentName, protocol *string
	ignoreSigterm, list, printScript           *bool
}

// defineServeFlags defines the flags of "acpdrive agent" into fs.
func defineServeFlags(fs *flag.FlagSet) serveFlags {
	return serveFlags{
		scenario:      fs.String("scenario", "", "built-in scenario `NAME` (default \"echo\"; see --list-scenarios)"),
		script:        fs.String("script", "", "JSON script `FILE`"),
		log:           fs.String("log", "", "append one JSON line per received message to `FILE`"),
		ignoreSigterm: fs.Bool("ignore-sigterm", false, "survive SIGTERM (in-process: the Terminate channel)"),
		agentName:     fs.String("agent-name", "", "answer initialize with agentInfo.name `NAME` (the rest of agentInfo as the script says)"),
		protocol:      fs.String("protocol", protocolV1, "the ACP version served: 1, 2 (the v2 draft; a v1 initialize is refused with -32022) or auto (what the client asks for)"),
		list:          fs.Bool("list-scenarios", false, "print the built-in scenarios and exit"),
		printScript:   fs.Bool("print-script", false, "print the selected script as JSON and exit"),
	}
}

// FlagSet is a flag set of "acpdrive agent"'s flags, for the CLI's shell
// completion.
func FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	defineServeFlags(fs)
	return fs
}

func parseServeFlags(args []string, stdout, stderr io.Writer) (cfg serveConfig, code int, ok bool) {
	fs := flag.NewFlagSet("acpdrive agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fl := defineServeFlags(fs)
	scenarioName, scriptPath, logPath, ignoreSigterm := fl.scenario, fl.script, fl.log, fl.ignoreSigterm
	agentName, protocol, list, printScript := fl.agentName, fl.protocol, fl.list, fl.printScript
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: acpdrive agent [--scenario NAME | --script FILE] [--agent-name NAME] [--log FILE] [--ignore-sigterm] [--protocol 1|2|auto]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, 0, false
		}
		return cfg, 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acpdrive agent: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cfg, 2, false
	}
	if *list {
		for _, name := range ScenarioNames() {
			s, _ := Scenario(name)
			fmt.Fprintf(stdout, "%-22s %s\n", name, s.Description)
		}
		return cfg, 0, false
	}
	switch {
	case *scenarioName != "" && *scriptPath != "":
		fmt.Fprintln(stderr, "acpdrive agent: --scenario and --script are exclusive")
		return cfg, 2, false
	case *scriptPath != "":
		s, err := LoadScriptFile(*scriptPath)
		if err != nil {
			fmt.Fprintf(stderr, "acpdrive agent: %v\n", err)
			return cfg, 2, false
		}
		cfg.script = s
	default:
		name := *scenarioName
		if name == "" {
			name = DefaultScenario
		}
		s, found := Scenario(name)
		if !found {
			fmt.Fprintf(stderr, "acpdrive agent: unknown scenario %q (known: %s)\n", name, strings.Join(ScenarioNames(), ", "))
			return cfg, 2, false
		}
		cfg.script = s
	}
	if *agentName != "" {
		cfg.script.nameAgent(*agentName)
	}
	if *printScript {
		out, err := cfg.script.Marshal()
		if err != nil {
			fmt.Fprintf(stderr, "acpdrive agent: %v\n", err)
			return cfg, 1, false
		}
		_, _ = stdout.Write(out)
		return cfg, 0, false
	}
	if !validProtocol(*protocol) {
		fmt.Fprintf(stderr, "acpdrive agent: --protocol %q: want 1, 2 or auto\n", *protocol)
		return cfg, 2, false
	}
	cfg.logPath = *logPath
	cfg.ignoreSigterm = *ignoreSigterm
	cfg.protocol = *protocol
	return cfg, 0, true
}

// spawnsUnasked names the first place where s spawns a descendant without a
// prompt naming a turn: its startup steps, a scripted reply or its default
// turn. It returns "" when there is none.
func spawnsUnasked(s *Script) string {
	if hasSpawn(s.Startup) {
		return "startup steps"
	}
	if in := s.Initialize; in != nil && (hasSpawn(in.Before) || hasSpawn(in.After)) {
		return "initialize reply"
	}
	methods := make([]string, 0, len(s.Methods))
	for m := range s.Methods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		for _, r := range s.Methods[m] {
			if hasSpawn(r.Before) || hasSpawn(r.After) {
				return "reply to " + m
			}
		}
	}
	if s.DefaultTurn != "" {
		if t := s.Turns[s.DefaultTurn]; t != nil && (hasSpawn(t.Steps) || hasSpawn(t.OnCancel)) {
			return "default turn " + s.DefaultTurn
		}
	}
	return ""
}

func hasSpawn(steps []Step) bool {
	for i := range steps {
		if steps[i].Step == StepSpawn || steps[i].Step == StepDaemon {
			return true
		}
	}
	return false
}

// withoutSpawns returns s with every named turn's spawn step replaced by an
// exit step that says why (code 2). The turns it changes are copies; s itself
// is not modified.
func withoutSpawns(s *Script) *Script {
	var changed map[string]*Turn
	for name, t := range s.Turns {
		if t == nil || (!hasSpawn(t.Steps) && !hasSpawn(t.OnCancel)) {
			continue
		}
		c := *t
		c.Steps = refuseSpawns(name, t.Steps)
		c.OnCancel = refuseSpawns(name, t.OnCancel)
		if changed == nil {
			changed = make(map[string]*Turn)
		}
		changed[name] = &c
	}
	if changed == nil {
		return s
	}
	out := *s
	out.Turns = make(map[string]*Turn, len(s.Turns))
	for name, t := range s.Turns {
		out.Turns[name] = t
	}
	for name, t := range changed {
		out.Turns[name] = t
	}
	return &out
}

func refuseSpawns(turn string, steps []Step) []Step {
	if !hasSpawn(steps) {
		return steps
	}
	out := make([]Step, len(steps))
	copy(out, steps)
	for i := range out {
		if out[i].Step == StepSpawn || out[i].Step == StepDaemon {
			out[i] = Step{
				Step:   StepExit,
				Code:   2,
				Stderr: fmt.Sprintf("acpdrive reference agent: turn %q spawns a descendant, which needs a real process: not supported in-process\n", turn),
			}
		}
	}
	return out
}
