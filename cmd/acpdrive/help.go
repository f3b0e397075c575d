package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagGroup is one heading of "acpdrive help run".
type flagGroup struct {
	title string
	names []string
}

// runFlagGroups orders run's flags under their headings; every flag of
// run is in exactly one (TestHelpRunGroupsEveryFlag).
var runFlagGroups = []flagGroup{
	{"RUNTIME", []string{"command", "workspace", "workflow", "protocol", "init-timeout", "verify-credential",
		"confirm-tool-servers", "confirm-tool-servers-timeout", "subagents", "no-measure", "sandbox", "sandbox-net"}},
	{"SESSION", []string{"resume", "fork", "mode", "model", "config", "add-dir", "permissions", "system-prompt",
		"system-prompt-file", "system-prompt-mode"}},
	{"LIMITS", []string{"read-timeout", "turn-timeout", "stall-timeout", "stop-grace", "max-tokens", "max-cost",
		"max-context-fraction", "retries"}},
	{"INPUT AND OUTPUT", []string{"f", "json", "quiet", "q", "verbose", "log-level", "answers", "output-schema", "output-schema-turns", "output-retries", "steer-stdin"}},
	{"SSH", []string{"ssh-host", "ssh-transport", "ssh-config"}},
	{"NETWORK", []string{"url", "token-env", "ca-file"}},
	{"HELD", []string{"hold", "hold-lease"}},
}

// batchFlagGroups orders batch's flags under their headings; every flag
// of batch is in exactly one (TestHelpBatchGroupsEveryFlag).
var batchFlagGroups = []flagGroup{
	{"RUNTIME", []string{"command", "workspace", "workflow", "protocol", "init-timeout",
		"confirm-tool-servers", "confirm-tool-servers-timeout", "subagents", "no-measure", "sandbox", "sandbox-net"}},
	{"SESSION", []string{"mode", "model", "config", "add-dir", "permissions", "system-prompt",
		"system-prompt-file", "system-prompt-mode"}},
	{"LIMITS", []string{"read-timeout", "turn-timeout", "stall-timeout", "stop-grace", "max-tokens", "max-cost",
		"max-context-fraction", "retries"}},
	{"PLACEMENT", []string{"parallel", "sessions-per-process", "keep-warm"}},
	{"OUTPUT", []string{"json", "log-level", "answers", "output-schema", "output-schema-turns", "output-retries"}},
	{"SSH", []string{"ssh-host", "ssh-transport", "ssh-config"}},
	{"NETWORK", []string{"url", "token-env", "ca-file"}},
	{"JOURNAL", []string{"journal", "resume", "hold-lease"}},
}

// writeFlagGroups writes each group's heading and flags.
func writeFlagGroups(fs *flag.FlagSet, groups []flagGroup, w io.Writer) {
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s\n", g.title)
		for _, name := range g.names {
			if fl := fs.Lookup(name); fl != nil {
				writeFlagHelp(w, fl)
			}
		}
	}
}

// batchHelp is "acpdrive help batch" (also "acpdrive batch --help").
func batchHelp(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `NAME
    acpdrive batch - run one session per task of a TASKS.jsonl, many at a time

SYNOPSIS
    acpdrive batch [flags] TASKS.jsonl
    acpdrive batch --resume DIR

DESCRIPTION
    Each line of TASKS.jsonl is a task: {"id": "...", "prompt": "..."} or
    "prompts": [...], with an optional "workspace" (default: --workspace, or
    the current directory) and "settings" (the WORKFLOW.md agent keys, over
    the flags for that task). Each task is one session, its prompts one turn
    each until one does not complete. --parallel tasks run at a time; their
    sessions share runtime processes (--sessions-per-process) and spread
    over the --ssh-host hosts, or run on the runtime served at --url (a
    task's "settings": {"url": ...} places it on a server of its own). On a
    terminal a live table shows every task; with --json, one line per
    finished task; otherwise one line of text per finished task. A task's
    failure never stops the others. With --journal DIR every task runs held
    and its state is recorded in DIR: after the batch died, --resume DIR
    prints the finished tasks' lines again, continues the running ones
    (no prompt is sent twice) and starts the rest.
`)
	writeFlagGroups(fs, batchFlagGroups, w)
	fmt.Fprint(w, `
EXIT STATUS
    0  every task completed
    1  a task did not complete (bad settings, no session, a turn that did
       not complete, a ceiling), or the batch was interrupted
    2  bad usage or configuration, before any task started
    5  every task completed, but one under an output schema ended without
       a valid result

EXAMPLES
    acpdrive batch --parallel 8 --sessions-per-process 4 --command codex-acp tasks.jsonl
    acpdrive batch --json --ssh-host build1,build2 --workspace /srv/repo tasks.jsonl
    acpdrive batch --url tcp://127.0.0.1:7000 tasks.jsonl
    acpdrive batch --json --journal state tasks.jsonl; acpdrive batch --resume state
`)
}

// runHelp is "acpdrive help run" (also "acpdrive run --help").
func runHelp(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `NAME
    acpdrive run - drive a coding-agent runtime through one session, one turn per prompt

SYNOPSIS
    acpdrive run [flags] PROMPT... [-- PROMPT...]
    acpdrive run [flags] -f FILE... [PROMPT...]

DESCRIPTION
    Starts the runtime (--command; the built-in reference agent when none is
    given), performs the ACP handshake, creates or continues one session, sends
    each prompt as one turn and stops at the first turn that does not complete.
    Flags may come before or after the prompts; -- ends them. The reply streams
    to standard output with the agent's thought, plan and tool calls, and a
    summary after each turn; errors go to standard error. A person's first
    Ctrl-C cancels the running turn, a second stops the session.
`)
	writeFlagGroups(fs, runFlagGroups, w)
	fmt.Fprint(w, `
EXIT STATUS
    0  every turn completed
    1  a turn did not complete (failed, timed out, cancelled, the runtime
       exited), or a ceiling stopped the run
    2  bad usage or configuration
    3  the session could not start
    4  a turn was refused or needs a person
    5  every turn completed, but one that asked for a result (--output-schema)
       ended without a valid one

ENVIRONMENT
    NO_COLOR                      no colour on a terminal
    OTEL_EXPORTER_OTLP_ENDPOINT   export traces and metrics over OTLP/HTTP

EXAMPLES
    acpdrive run "hello"
    acpdrive run --command "gemini --acp" -f task.md
    git diff | acpdrive run -q -f - --command claude-agent-acp --mode default
    acpdrive run --resume 3f2c... --command claude-agent-acp "go on"
`)
}

// valueNames name the value of a flag whose usage does not.
var valueNames = map[string]string{
	"command": "CMD", "workspace": "DIR", "protocol": "1|2|auto", "log-level": "LEVEL",
	"ssh-transport": "openssh|native", "system-prompt": "TEXT", "system-prompt-mode": "append|override",
	"output-schema-turns": "each|last",
}

// typeNames name a value by its type.
var typeNames = map[string]string{"duration": "DURATION", "float": "NUMBER", "int": "N", "string": "VALUE"}

// writeFlagHelp writes one flag: its name and value, then its usage
// wrapped under it, and its default when it has one.
func writeFlagHelp(w io.Writer, fl *flag.Flag) {
	value, usage := flag.UnquoteUsage(fl)
	dash := "--"
	if len(fl.Name) == 1 {
		dash = "-"
	}
	if v, ok := valueNames[fl.Name]; ok {
		value = v
	} else if v, ok := typeNames[value]; ok {
		value = v
	}
	head := "    " + dash + fl.Name
	if value != "" {
		head += " " + value
	}
	fmt.Fprintln(w, head)
	if d := fl.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && d != "[]" {
		usage += " (default " + d + ")"
	}
	for _, line := range wrapWords(usage, 68) {
		fmt.Fprintln(w, "        "+line)
	}
}

// wrapWords breaks text into lines of at most width runes where it can.
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
