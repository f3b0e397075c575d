// Package remotecmd builds what both SSH transports (the ssh binary of
// adapters/sshexec and the native client of adapters/sshexec/native) send
// to the remote host: the remote command with its containment wrapper
// (docs/behaviour.md#ssh), the ssh_pass_env preamble, the agent.command
// fragment, and the commands and markers by which a transport finds and
// ends the session's remote process group.
package remotecmd

import (
	"strconv"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
)

// RemoteSpec is what the remote command is built from. Both SSH transports
// (the ssh binary and the native client) build the same command from it.
type RemoteSpec struct {
	// Command is agent.command verbatim: a shell fragment, passed as
	// written (docs/behaviour.md#ssh).
	Command string
	// Args are the arguments acpdrive adds; each is single-quoted.
	Args []string
	// Workspace is the directory the runtime runs in on the remote host;
	// it is single-quoted.
	Workspace string
	// PassEnv names the variables worker.ssh_pass_env forwards. Only the
	// names reach this struct; their values travel in the Preamble.
	PassEnv []string
	// PreambleLen is len(Preamble(...)) for the values being sent, 0 when
	// PassEnv is empty (then no preamble is read).
	PreambleLen int
	// Sandbox, when not nil, runs the runtime under bubblewrap on the
	// remote host (docs/behaviour.md#sandbox).
	Sandbox *RemoteSandbox
}

// PreambleSentinel is the last line of every preamble. The remote command
// runs nothing until it has read a preamble ending in it, so a preamble
// cut short fails the launch instead of starting the runtime without its
// variables. It is a shell comment, so eval ignores it.
const PreambleSentinel = "# acpdrive preamble end"

// Messages the remote command writes to standard error (prefixed
// "acpdrive: ") before it exits non-zero.
const (
	// MsgRemoteNoDD is written when worker.ssh_pass_env is set and the
	// remote host has no dd; the exit status is 127.
	MsgRemoteNoDD = "dd not found on the remote host: worker.ssh_pass_env cannot be delivered"
	// MsgRemotePreambleTruncated is written when the preamble did not
	// arrive whole; the exit status is 125.
	MsgRemotePreambleTruncated = "ssh_pass_env preamble truncated: the runtime was not started"
)

// Exit statuses of the remote command's own failures.
const (
	// ExitRemoteNoDD is the remote exit status when dd is missing.
	ExitRemoteNoDD = 127
	// ExitRemotePreambleTruncated is the remote exit status of a
	// truncated preamble.
	ExitRemotePreambleTruncated = 125
)

// Remote containment timing, in whole seconds (POSIX sleep takes integers).
const (
	// watchdogPollSeconds is how often the remote watchdog looks for the
	// end of the connection.
	watchdogPollSeconds = 1
	// watchdogGraceSeconds is how long the watchdog waits between TERM and
	// KILL of the session's process group.
	watchdogGraceSeconds = 2
)

// ShellQuote returns s single-quoted for a POSIX shell: every quote becomes
// quote, backslash, quote, quote, and the result is wrapped in quotes, so
// the shell reads s literally
// (newlines, $, backticks and backslashes included).
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// validName reports whether name is a portable shell variable name.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// PassEnvValues looks every name up (lookup is os.LookupEnv in production)
// and returns the variables that are set, in the order named. A name that
// is not a portable shell variable name, a repeated name, or a variable
// that is not set is left out: the remote host keeps its own value.
func PassEnvValues(names []string, lookup func(string) (string, bool)) []domain.NameValue {
	var out []domain.NameValue
	seen := map[string]bool{}
	for _, name := range names {
		if !validName(name) || seen[name] {
			continue
		}
		seen[name] = true
		if v, ok := lookup(name); ok {
			out = append(out, domain.NameValue{Name: name, Value: v})
		}
	}
	return out
}

// Preamble returns the bytes written to the remote standard input before
// the first protocol byte when worker.ssh_pass_env is set: one
// `export NAME='value'` line per variable (values single-quoted, so the
// remote eval reads them literally), then PreambleSentinel and a newline.
// Variables whose names are not portable shell names are left out. With
// no variables it is the sentinel line alone; the caller sends a preamble
// whenever PassEnv is non-empty, so the remote side always knows what to
// read.
func Preamble(vars []domain.NameValue) []byte {
	var b strings.Builder
	for _, v := range vars {
		if !validName(v.Name) {
			continue
		}
		b.WriteString("export ")
		b.WriteString(v.Name)
		b.WriteString("=")
		b.WriteString(ShellQuote(v.Value))
		b.WriteString("\n")
	}
	b.WriteString(PreambleSentinel)
	b.WriteString("\n")
	return []byte(b.String())
}

// RemoteCommand returns the command the remote shell runs (the last
// argument of ssh, or the exec request of a native session). It is POSIX
// sh; line by line:
//
// With a preamble (PreambleLen > 0):
//
//	command -v dd >/dev/null 2>&1 || { printf ... >&2; exit 127; }
//	    dd reads the preamble; without it the launch fails, saying so.
//	acpdrive_pre=$(dd bs=1 count=N 2>/dev/null; echo .)
//	    reads exactly N bytes from standard input, one byte per read, so
//	    not one protocol byte is consumed (a pipe may return short reads;
//	    bs=1 never over-reads). The values never touch an argument list.
//	    The "." keeps the final newline from being stripped.
//	case $acpdrive_pre in *"\n# acpdrive preamble end\n.") ;; *) ...; exit 125;; esac
//	    the preamble must end in the sentinel line and its newline;
//	    anything shorter fails the launch with a message on standard
//	    error before the runtime starts.
//	eval "${acpdrive_pre%.}"; unset acpdrive_pre
//	    runs the export lines: the variables are now in the environment
//	    the runtime inherits.
//
// Always:
//
//	exec 3<&0
//	    keeps the channel's standard input on fd 3: a background command of
//	    a non-interactive shell would otherwise get /dev/null.
//	acpdrive_pp=$PPID
//	    the sshd session process that runs this command. It lives exactly
//	    as long as the connection does.
//	cd -- '<workspace>' && {
//	( <agent.command verbatim> '<arg>'...
//	) <&3 3<&- &
//	} || exit 1
//	    the documented form (docs/behaviour.md#ssh): the workspace and the added arguments are quoted, the
//	    fragment is not; the closing parenthesis is on its own line so a
//	    fragment ending in a comment still parses. The runtime runs in the
//	    background with the channel as its standard input.
//	acpdrive_rt=$!; exec 3<&- </dev/null
//	    remembers the runtime's PID and drops this shell's own copy of
//	    the channel.
//	trap '' TERM HUP
//	    this shell survives the watchdog's TERM. It is set after the
//	    runtime has started (so the runtime does not inherit an ignored
//	    TERM) and before the watchdog starts (so no TERM of the watchdog
//	    can reach this shell before it is ignored: a runtime that exits at
//	    once would otherwise have its status replaced by death by TERM).
//	( trap '' TERM HUP INT
//	  while kill -0 "$acpdrive_pp" && kill -0 "$acpdrive_rt"; do sleep 1; done
//	  while kill -0 "$acpdrive_pp" && kill -0 $$; do sleep 1; done
//	  kill -s TERM 0; sleep 2; kill -s KILL 0
//	) </dev/null >/dev/null 2>&1 &
//	    the watchdog. It holds none of the channel's streams (so it never
//	    keeps the connection open), ignores TERM, and polls once a second.
//	    When the sshd session process is gone (the session stopped, the
//	    local ssh was killed, the connection dropped) or the runtime has
//	    ended, it sends TERM to the whole process group, waits, and sends
//	    KILL to it. The group is the session's: sshd starts every
//	    session's command in a new session (setsid), pty or not, so the
//	    group holds this shell, the runtime and every descendant that did
//	    not leave it, and nothing else. KILL ends the watchdog last.
//	    When the runtime ended on its own while the connection lives, the
//	    watchdog first waits for this shell ($$) to be gone, so its KILL
//	    never ends this shell before it has exited with the runtime's
//	    status, however late the shell is scheduled.
//	wait "$acpdrive_rt"; exit $?
//	    when the runtime exits on its own, this shell exits with its
//	    status (127 for a program not found, the remote shell's own message
//	    already on standard error); sshd reports it as the session's exit
//	    status.
//
// If cd fails, the shell's own message is on standard error and the
// command exits 1.
func RemoteCommand(s RemoteSpec) string {
	var b strings.Builder
	if s.PreambleLen > 0 {
		b.WriteString("command -v dd >/dev/null 2>&1 || { printf '%s\\n' ")
		b.WriteString(ShellQuote("acpdrive: " + MsgRemoteNoDD))
		b.WriteString(" >&2; exit " + strconv.Itoa(ExitRemoteNoDD) + "; }\n")
		b.WriteString("acpdrive_pre=$(dd bs=1 count=" + strconv.Itoa(s.PreambleLen) + " 2>/dev/null; echo .)\n")
		b.WriteString("case $acpdrive_pre in *" + ShellQuote("\n"+PreambleSentinel+"\n.") + ") ;; *) printf '%s\\n' ")
		b.WriteString(ShellQuote("acpdrive: " + MsgRemotePreambleTruncated))
		b.WriteString(" >&2; exit " + strconv.Itoa(ExitRemotePreambleTruncated) + ";; esac\n")
		b.WriteString("eval \"${acpdrive_pre%.}\"; unset acpdrive_pre\n")
	}
	if s.Sandbox != nil {
		b.WriteString(sandboxCheck())
	}
	b.WriteString("exec 3<&0\n")
	b.WriteString("acpdrive_pp=$PPID\n")
	b.WriteString("cd -- " + ShellQuote(s.Workspace) + " && {\n")
	b.WriteString("( ")
	var line strings.Builder
	line.WriteString(s.Command)
	for _, a := range s.Args {
		line.WriteString(" ")
		line.WriteString(ShellQuote(a))
	}
	if s.Sandbox != nil {
		b.WriteString(SandboxWords(*s.Sandbox, s.Workspace, line.String()+"\n"))
	} else {
		b.WriteString(line.String())
	}
	b.WriteString("\n) <&3 3<&- &\n} || exit 1\n")
	b.WriteString("acpdrive_rt=$!; exec 3<&- </dev/null\n")
	b.WriteString("trap '' TERM HUP\n")
	b.WriteString("( trap '' TERM HUP INT\n")
	b.WriteString("  while kill -0 \"$acpdrive_pp\" 2>/dev/null && kill -0 \"$acpdrive_rt\" 2>/dev/null; do sleep " +
		strconv.Itoa(watchdogPollSeconds) + "; done\n")
	b.WriteString("  while kill -0 \"$acpdrive_pp\" 2>/dev/null && kill -0 $$ 2>/dev/null; do sleep " +
		strconv.Itoa(watchdogPollSeconds) + "; done\n")
	b.WriteString("  kill -s TERM 0 2>/dev/null; sleep " + strconv.Itoa(watchdogGraceSeconds) +
		"; kill -s KILL 0 2>/dev/null\n")
	b.WriteString(") </dev/null >/dev/null 2>&1 &\n")
	b.WriteString("wait \"$acpdrive_rt\"; exit $?\n")
	return b.String()
}

// JoinFragment rebuilds agent.command's shell fragment from its words: a
// word holding whitespace or a quote or backslash (the splitter removed
// the quoting that kept it one word) is single-quoted again; every other
// word is passed as written, so $VAR, ;, && and | stay shell syntax on the
// remote host. A command of one word is that fragment verbatim (a library
// caller's "echo hi; exec agent"), so one word is never re-quoted.
func JoinFragment(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\") {
			out[i] = ShellQuote(w)
		} else {
			out[i] = w
		}
	}
	return strings.Join(out, " ")
}
