package refagent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Identity reported in initialize's agentInfo.
const (
	// AgentName is agentInfo.name.
	AgentName = "acpdrive-reference-agent"
	// AgentTitle is agentInfo.title.
	AgentTitle = "acpdrive reference agent"
	// Version is agentInfo.version.
	Version = "0.1.0"
)

// Main runs the reference agent: an ACP v1 agent serving newline-delimited
// JSON-RPC 2.0 on stdin/stdout, scripted by a named scenario or a script
// file. args excludes the program name and the "agent" subcommand. It returns
// the process exit code: 0 when stdin ends (or ctx is done), the code of a
// scripted exit, 143 on SIGTERM (unless ignored), 2 on a usage error.
//
// Flags:
//
//	--scenario NAME     a built-in script (default "echo"); see ScenarioNames
//	--script FILE       a JSON script file (see Script)
//	--log FILE          append one JSON line (LogRecord) per message received
//	--ignore-sigterm    survive SIGTERM
//	--list-scenarios    print the scenario names and descriptions, then exit
//	--print-script      print the selected script as JSON, then exit
//
// Main handles SIGTERM itself while it runs; the caller's ctx should not be
// tied to SIGTERM, or --ignore-sigterm cannot work. Scripted exits and
// spawned descendants act on the real process: a descendant inherits stdout
// and stderr when they are *os.File values (os.Stdout and os.Stderr
// otherwise). When Main returns before stdin has ended (a scripted exit, a
// signal, ctx), one goroutine stays blocked reading stdin until it ends; the
// process is expected to exit with the returned code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Catch SIGTERM first, so that --ignore-sigterm leaves no window.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	defer signal.Stop(sigs)

	fs := flag.NewFlagSet("acpdrive agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenarioName := fs.String("scenario", "", "built-in scenario `NAME` (default \"echo\"; see --list-scenarios)")
	scriptPath := fs.String("script", "", "JSON script `FILE`")
	logPath := fs.String("log", "", "append one JSON line per received message to `FILE`")
	ignoreSigterm := fs.Bool("ignore-sigterm", false, "survive SIGTERM")
	list := fs.Bool("list-scenarios", false, "print the built-in scenarios and exit")
	printScript := fs.Bool("print-script", false, "print the selected script as JSON and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: acpdrive agent [--scenario NAME | --script FILE] [--log FILE] [--ignore-sigterm]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acpdrive agent: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *list {
		for _, name := range ScenarioNames() {
			s, _ := Scenario(name)
			fmt.Fprintf(stdout, "%-22s %s\n", name, s.Description)
		}
		return 0
	}

	var script *Script
	switch {
	case *scenarioName != "" && *scriptPath != "":
		fmt.Fprintln(stderr, "acpdrive agent: --scenario and --script are exclusive")
		return 2
	case *scriptPath != "":
		s, err := LoadScriptFile(*scriptPath)
		if err != nil {
			fmt.Fprintf(stderr, "acpdrive agent: %v\n", err)
			return 2
		}
		script = s
	default:
		name := *scenarioName
		if name == "" {
			name = DefaultScenario
		}
		s, ok := Scenario(name)
		if !ok {
			fmt.Fprintf(stderr, "acpdrive agent: unknown scenario %q (known: %s)\n", name, strings.Join(ScenarioNames(), ", "))
			return 2
		}
		script = s
	}
	if *printScript {
		out, err := script.Marshal()
		if err != nil {
			fmt.Fprintf(stderr, "acpdrive agent: %v\n", err)
			return 1
		}
		_, _ = stdout.Write(out)
		return 0
	}

	a := newAgent(script, stdout, stderr)
	a.ignoreSigterm = *ignoreSigterm || script.IgnoreSigterm
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "acpdrive agent: open log: %v\n", err)
			return 2
		}
		defer f.Close()
		a.log = &eventLog{w: f}
	}
	return a.run(ctx, stdin, sigs)
}
