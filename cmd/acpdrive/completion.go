package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/acpdrive/acpdrive/refagent"
)

// subcommands are the commands completion offers, with a line each.
var subcommands = [][2]string{
	{"run", "run one session, one turn per prompt"},
	{"probe", "show what a runtime advertises"},
	{"sessions", "list or delete the sessions a runtime keeps"},
	{"batch", "run one session per task of a TASKS.jsonl, many at a time"},
	{"validate", "check a WORKFLOW.md"},
	{"agent", "serve the built-in reference agent on stdio"},
	{"completion", "print a shell completion script"},
	{"help", "show help"},
	{"version", "print the version"},
}

// flagValues are the fixed values of a flag, offered after it.
var flagValues = map[string]string{
	"log-level":           "debug info warn error",
	"output-schema-turns": "each last",
	"protocol":            "1 2 auto",
	"ssh-transport":       "openssh native",
	"system-prompt-mode":  "append override",
	"permissions":         "refuse read edit rules:",
	"sandbox-net":         "host none",
	// The modes the runtimes of docs/runtimes.md offer; a runtime may
	// offer others (acpdrive probe --session lists them).
	"mode":     "default plan auto acceptEdits auto-edit yolo build",
	"scenario": strings.Join(refagent.ScenarioNames(), " "),
}

// Flags whose value is a directory or a file.
var (
	dirFlags  = map[string]bool{"workspace": true, "add-dir": true}
	fileFlags = map[string]bool{"workflow": true, "f": true, "system-prompt-file": true, "ssh-config": true, "output-schema": true, "answers": true, "script": true, "log": true}
)

// commandFlagSets are the flag sets of the commands that take flags.
func commandFlagSets() map[string]*flag.FlagSet {
	var rf, pf, sf runFlags
	var bf batchFlags
	probe := flag.NewFlagSet("probe", flag.ContinueOnError)
	pf.register(probe)
	probe.Bool("session", false, "also create a throwaway session (deleted or closed after) to show its modes, configuration options, models and commands")
	sessions := flag.NewFlagSet("sessions", flag.ContinueOnError)
	sf.register(sessions)
	return map[string]*flag.FlagSet{"run": newRunFlagSet(&rf), "probe": probe, "sessions": sessions, "batch": newBatchFlagSet(&bf), "agent": refagent.FlagSet()}
}

// flagWords lists a flag set's flags as typed ("--name", "-f").
func flagWords(fs *flag.FlagSet) []string {
	var words []string
	fs.VisitAll(func(fl *flag.Flag) {
		if len(fl.Name) == 1 {
			words = append(words, "-"+fl.Name)
		} else {
			words = append(words, "--"+fl.Name)
		}
	})
	sort.Strings(words)
	return words
}

func completionUsage(w io.Writer) {
	fmt.Fprint(w, `usage: acpdrive completion bash|zsh|fish

  bash:  source <(acpdrive completion bash)        (or save it under bash-completion's completions/acpdrive)
  zsh:   acpdrive completion zsh > "${fpath[1]}/_acpdrive"
  fish:  acpdrive completion fish > ~/.config/fish/completions/acpdrive.fish
`)
}

// completionCommand is "acpdrive completion bash|zsh|fish".
func completionCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		completionUsage(stdout)
		return exitOK
	}
	if len(args) != 1 {
		fmt.Fprintln(stderr, "acpdrive completion: name one shell: bash, zsh or fish")
		completionUsage(stderr)
		return exitUsage
	}
	sets := commandFlagSets()
	switch args[0] {
	case "bash":
		writeBashCompletion(stdout, sets)
	case "zsh":
		writeZshCompletion(stdout, sets)
	case "fish":
		writeFishCompletion(stdout, sets)
	default:
		fmt.Fprintf(stderr, "acpdrive completion: %q: want bash, zsh or fish\n", args[0])
		return exitUsage
	}
	return exitOK
}

func subcommandNames() string {
	var names []string
	for _, c := range subcommands {
		names = append(names, c[0])
	}
	return strings.Join(names, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// flagList joins the names of a set of flags as a shell pattern
// ("--workspace|--add-dir").
func flagList(names map[string]bool) string {
	var words []string
	for _, n := range sortedKeys(names) {
		if len(n) == 1 {
			words = append(words, "-"+n)
		} else {
			words = append(words, "--"+n)
		}
	}
	return strings.Join(words, "|")
}

func writeBashCompletion(w io.Writer, sets map[string]*flag.FlagSet) {
	fmt.Fprintf(w, `# bash completion for acpdrive (acpdrive completion bash)
_acpdrive() {
    local cur prev cmd flags
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "%s" -- "$cur"))
        return
    fi
    cmd="${COMP_WORDS[1]}"
    case "$prev" in
        %s) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;
`, subcommandNames(), flagList(dirFlags), flagList(fileFlags))
	for _, name := range sortedKeys(flagValues) {
		fmt.Fprintf(w, "        --%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", name, flagValues[name])
	}
	fmt.Fprint(w, `    esac
    case "$cmd" in
`)
	for _, name := range sortedKeys(sets) {
		fmt.Fprintf(w, "        %s) flags=%q ;;\n", name, strings.Join(flagWords(sets[name]), " "))
	}
	fmt.Fprint(w, `        completion) COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")); return ;;
        help) COMPREPLY=($(compgen -W "run probe sessions batch validate agent completion" -- "$cur")); return ;;
        validate) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        *) return ;;
    esac
    if [[ $cmd == sessions && $COMP_CWORD -eq 2 ]]; then
        COMPREPLY=($(compgen -W "list delete" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    fi
}
complete -o default -F _acpdrive acpdrive
`)
}

// zshQuote escapes a description for an _arguments spec.
func zshQuote(s string) string {
	s = strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:").Replace(s)
	return s
}

func writeZshCompletion(w io.Writer, sets map[string]*flag.FlagSet) {
	fmt.Fprint(w, "#compdef acpdrive\n# zsh completion for acpdrive (acpdrive completion zsh)\n\n_acpdrive() {\n    local -a commands\n    commands=(\n")
	for _, c := range subcommands {
		fmt.Fprintf(w, "        '%s:%s'\n", c[0], zshQuote(c[1]))
	}
	fmt.Fprint(w, "    )\n    if (( CURRENT == 2 )); then\n        _describe 'command' commands\n        return\n    fi\n    case $words[2] in\n")
	for _, name := range sortedKeys(sets) {
		fmt.Fprintf(w, "        %s)\n            _arguments -s \\\n", name)
		if name == "sessions" {
			fmt.Fprint(w, "                '2:action:(list delete)' \\\n")
		}
		sets[name].VisitAll(func(fl *flag.Flag) {
			_, usage := flag.UnquoteUsage(fl)
			dash := "--"
			if len(fl.Name) == 1 {
				dash = "-"
			}
			spec := "'" + dash + fl.Name + "[" + zshQuote(firstClause(usage)) + "]"
			switch {
			case isBoolFlag(fl):
			case dirFlags[fl.Name]:
				spec += ":directory:_files -/"
			case fileFlags[fl.Name]:
				spec += ":file:_files"
			case flagValues[fl.Name] != "":
				spec += ":value:(" + flagValues[fl.Name] + ")"
			default:
				spec += ":value: "
			}
			fmt.Fprintf(w, "                %s' \\\n", spec)
		})
		switch name {
		case "batch":
			fmt.Fprint(w, "                '1:tasks file:_files'\n            ;;\n")
		case "agent":
			fmt.Fprint(w, "                \n            ;;\n")
		default:
			fmt.Fprint(w, "                '*:prompt: '\n            ;;\n")
		}
	}
	fmt.Fprint(w, "        completion) _arguments '2:shell:(bash zsh fish)' ;;\n        validate) _files ;;\n    esac\n}\n\n_acpdrive \"$@\"\n")
}

func writeFishCompletion(w io.Writer, sets map[string]*flag.FlagSet) {
	fmt.Fprint(w, "# fish completion for acpdrive (acpdrive completion fish)\ncomplete -c acpdrive -f\n")
	for _, c := range subcommands {
		fmt.Fprintf(w, "complete -c acpdrive -n __fish_use_subcommand -a %s -d %s\n", c[0], fishQuote(c[1]))
	}
	fmt.Fprint(w, "complete -c acpdrive -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	fmt.Fprint(w, "complete -c acpdrive -n '__fish_seen_subcommand_from sessions' -a 'list delete'\n")
	for _, name := range sortedKeys(sets) {
		sets[name].VisitAll(func(fl *flag.Flag) {
			_, usage := flag.UnquoteUsage(fl)
			opt := "-l " + fl.Name
			if len(fl.Name) == 1 {
				opt = "-s " + fl.Name
			}
			extra := ""
			switch {
			case isBoolFlag(fl):
			case dirFlags[fl.Name]:
				extra = " -r -a '(__fish_complete_directories)'"
			case fileFlags[fl.Name]:
				extra = " -r -F"
			case flagValues[fl.Name] != "":
				extra = " -r -a " + fishQuote(flagValues[fl.Name])
			default:
				extra = " -r"
			}
			fmt.Fprintf(w, "complete -c acpdrive -n '__fish_seen_subcommand_from %s' %s%s -d %s\n", name, opt, extra, fishQuote(firstClause(usage)))
		})
	}
}

func fishQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

// firstClause is a usage text up to its first "(" or ";", for a one-line
// description.
func firstClause(s string) string {
	if i := strings.IndexAny(s, "(;"); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func isBoolFlag(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
