// Command acpdrive drives a coding-agent runtime that speaks the Agent
// Client Protocol: it runs a session of one or more turns, serves the
// built-in reference agent, and reports what happened.
//
// Usage:
//
//	acpdrive run [flags] PROMPT...   run one session, one turn per PROMPT
//	acpdrive probe --command CMD     show what a runtime advertises
//	acpdrive sessions list|delete    list or delete a runtime's sessions
//	acpdrive agent [flags]           serve the reference agent on stdio
//	acpdrive version                 print the version
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/refagent"
)

// Exit statuses of the CLI, stable (README's table; docs/behaviour.md#cli).
const (
	exitOK         = 0
	exitTurnFailed = 1
	exitUsage      = 2
	exitNoSession  = 3
	// exitNeedsPerson: a turn was refused (turn_refused) or needs a
	// person (turn_input_required): retrying unattended will not help.
	exitNeedsPerson = 4
	// exitResultMissing: every turn completed, but one under an output
	// schema ended without a valid result (docs/behaviour.md#structured-results).
	exitResultMissing = 5
)

func main() {
	os.Exit(realMain(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func realMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return runCommand(ctx, args[1:], stdin, stdout, stderr)
	case "validate":
		return validateCommand(args[1:], stdout, stderr)
	case "agent":
		return refagent.Main(ctx, args[1:], stdin, stdout, stderr)
	case "probe":
		return probeCommand(ctx, args[1:], stdout, stderr)
	case "sessions":
		return sessionsCommand(ctx, args[1:], stdout, stderr)
	case "batch":
		return batchCommand(ctx, args[1:], stdout, stderr)
	case "serve":
		return serveCommand(ctx, args[1:], stdout, stderr)
	case "attach":
		return attachCommand(ctx, args[1:], stdout, stderr)
	case "held":
		return heldCommand(args[1:], stdout, stderr)
	case "release":
		return releaseCommand(args[1:], stdout, stderr)
	case holderSubcommand:
		// Hidden: a held run's holder (docs/behaviour.md#held-sessions).
		return holderCommand(ctx, args[1:], stdout, stderr)
	case mcpresult.SubcommandName:
		// Hidden: the result tool's server a runtime starts as an MCP
		// server (docs/behaviour.md#structured-results).
		return mcpresult.Main(ctx, args[1:], stdin, stdout, stderr)
	case mcpbeacon.SubcommandName:
		// Hidden: the tool-server beacon a runtime starts as an MCP server
		// (docs/behaviour.md#tool-server-confirmation).
		return mcpbeacon.Main(ctx, args[1:], stdin, stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "acpdrive %s\n", app.Version)
		return exitOK
	case "help", "-h", "--help":
		return helpCommand(args[1:], stdout, stderr)
	case "completion":
		return completionCommand(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "acpdrive: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  acpdrive run [flags] PROMPT...   run one session, one turn per PROMPT
  acpdrive probe [flags]           start a runtime, show what it advertises, stop it
  acpdrive sessions list|delete    list or delete the sessions a runtime keeps
  acpdrive batch [flags] TASKS.jsonl  run one session per task, many at a time
  acpdrive validate [FILE]         check a WORKFLOW.md (default ./WORKFLOW.md; --json)
  acpdrive agent [flags]           serve the built-in reference agent on stdio
  acpdrive serve --listen ADDR -- COMMAND...  serve a stdio runtime at a network address
  acpdrive attach REF [--json]     complete a held run: its running turn, then the prompts not sent (REF from run --hold)
  acpdrive held [--json]           list this user's held sessions
  acpdrive release REF             end a held session
  acpdrive completion bash|zsh|fish  print a shell completion script
  acpdrive version                 print the version

Run "acpdrive help run" or "acpdrive help batch" for their flags, grouped.
`)
}

// helpCommand is "acpdrive help [COMMAND]".
func helpCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return exitOK
	}
	switch args[0] {
	case "run":
		var f runFlags
		runHelp(newRunFlagSet(&f), stdout)
		return exitOK
	case "probe", "sessions", "validate", "agent", "batch", "serve", "attach", "held", "release":
		return realMain(context.Background(), []string{args[0], "--help"}, nil, stdout, stderr)
	case "completion":
		completionUsage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "acpdrive help: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}
