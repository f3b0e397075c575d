package remotecmd

import (
	"strconv"
	"strings"

	"github.com/acpdrive/acpdrive/adapters/internal/statedirs"
	"github.com/acpdrive/acpdrive/domain"
)

// RemoteSandbox is the sandbox the remote command builds around the
// runtime (docs/behaviour.md#sandbox), on the remote host, with its
// bubblewrap, its home directory and its temporary directory.
type RemoteSandbox struct {
	// Network is the sandbox's network; "" means the host's.
	Network domain.SandboxNetwork
	// Writable are the further writable directories: absolute, or "~/…"
	// for the remote home directory.
	Writable []string
	// AddDirs are the session's additional directories.
	AddDirs []string
	// Keep are entries of the remote /tmp that the runtime's command line
	// names (domain.SandboxKeptTmp of domain.SandboxCommandPaths): they
	// stay visible, read-only, on the sandbox's private /tmp.
	Keep []string
}

// ExitRemoteNoBwrap is the remote exit status when the sandbox is asked
// for and the remote host has no bubblewrap; domain.MsgSandboxRemoteNoBwrap
// is on standard error.
const ExitRemoteNoBwrap = 127

// sandboxCheck is the remote command's first part under a sandbox: the
// refusal when bubblewrap is missing (nothing runs unconfined instead),
// then acpdrive's own entries of the host's /tmp (domain.SandboxKeepPrefix;
// symbolic links left out), as read-only bubblewrap binds in the
// positional parameters, which the bubblewrap command line expands
// between the head and the tail of domain.SandboxArgsParts:
//
//	command -v bwrap >/dev/null 2>&1 || { printf ... >&2; exit 127; }
//	set --
//	for acpdrive_f in /tmp/acpdrive-*; do
//	  { [ -e "$acpdrive_f" ] && [ ! -L "$acpdrive_f" ]; } || continue
//	  set -- "$@" --ro-bind-try "$acpdrive_f" "$acpdrive_f"
//	done
func sandboxCheck() string {
	return "command -v bwrap >/dev/null 2>&1 || { printf '%s\\n' " +
		ShellQuote("acpdrive: "+domain.MsgSandboxRemoteNoBwrap) + " >&2; exit " + strconv.Itoa(ExitRemoteNoBwrap) + "; }\n" +
		"set --\n" +
		"for acpdrive_f in " + domain.SandboxTmp + "/" + domain.SandboxKeepPrefix + "*; do\n" +
		"  { [ -e \"$acpdrive_f\" ] && [ ! -L \"$acpdrive_f\" ]; } || continue\n" +
		"  set -- \"$@\" --ro-bind-try \"$acpdrive_f\" \"$acpdrive_f\"\n" +
		"done\n"
}

// SandboxWords returns the bubblewrap command line (shell words, quoted
// for the remote shell) that runs the runtime's line inside the sandbox:
// `trap ” TERM; exec bwrap <head> "$@" <tail> /bin/sh -c <inner shim> sh
// /bin/sh -c '<line>'` (domain.SandboxArgsParts; "$@" holds the /tmp
// entries sandboxCheck listed; bubblewrap ignores the watchdog's TERM,
// the runtime gets it, as domain.SandboxOuterShim and SandboxInnerShim
// do locally). The state directories
// and "~/…" entries expand on the remote host ("${HOME}", the runtime's
// variables); the workspace and the directories given are single-quoted.
func SandboxWords(s RemoteSandbox, workspace, line string) string {
	var writable []string
	for _, d := range statedirs.All() {
		writable = append(writable, d.ShellPaths()...)
	}
	for _, w := range s.Writable {
		writable = append(writable, domain.ExpandHome(w, "${HOME}"))
	}
	head, tail := domain.SandboxArgsParts(domain.SandboxLayout{
		Workspace: workspace, AddDirs: s.AddDirs, Writable: writable, Network: s.Network,
	})
	words := []string{"trap", "''", "TERM;", "exec", "bwrap"}
	for _, a := range head {
		words = append(words, quoteSandboxWord(a))
	}
	words = append(words, `"$@"`)
	for _, k := range s.Keep {
		words = append(words, "--ro-bind-try", ShellQuote(k), ShellQuote(k))
	}
	for _, a := range tail {
		words = append(words, quoteSandboxWord(a))
	}
	words = append(words, "/bin/sh", "-c", ShellQuote(domain.SandboxInnerShim), "sh", "/bin/sh", "-c", ShellQuote(line))
	return strings.Join(words, " ")
}

// quoteSandboxWord quotes one word of the bubblewrap command line. A word
// acpdrive wrote as a shell expansion (a state directory,
// "${acpdrive_tmp}": it starts with "${" and holds nothing but names,
// braces, ":-", "/" and ".") is double-quoted so the remote shell expands
// it; "${HOME}/rest" from a "~/rest" entry expands the home and
// single-quotes the rest; every other word is single-quoted.
func quoteSandboxWord(w string) string {
	if strings.HasPrefix(w, "${") && safeExpansion(w) {
		return `"` + w + `"`
	}
	if rest, ok := strings.CutPrefix(w, "${HOME}/"); ok {
		return `"${HOME}"/` + ShellQuote(rest)
	}
	return ShellQuote(w)
}

func safeExpansion(w string) bool {
	for _, c := range w {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("_${}:-/.", c):
		default:
			return false
		}
	}
	return true
}

// SandboxFor is the remote sandbox of a launch request's settings and
// command line, nil when none is asked for.
func SandboxFor(s domain.Sandbox, addDirs, command []string) *RemoteSandbox {
	if !s.Enabled {
		return nil
	}
	return &RemoteSandbox{Network: s.Network, Writable: append([]string(nil), s.Writable...),
		AddDirs: append([]string(nil), addDirs...),
		Keep:    domain.SandboxKeptTmp(nil, domain.SandboxCommandPaths(command))}
}
