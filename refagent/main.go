package refagent

import (
	"context"
	"io"
	"os"
	"os/signal"
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
//	--agent-name NAME   answer initialize with agentInfo.name NAME
//	--log FILE          append one JSON line (LogRecord) per message received
//	--ignore-sigterm    survive SIGTERM
//	--protocol 1|2|auto the ACP version served (default 1; see docs/behaviour.md#protocol-v2)
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

	cfg, code, ok := parseServeFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	a, closeLog, code, ok := cfg.agent(stdout, stderr)
	if !ok {
		return code
	}
	defer closeLog()
	return a.run(ctx, stdin, sigs)
}
