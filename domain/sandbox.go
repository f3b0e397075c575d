package domain

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// SandboxNetwork says what network a sandboxed runtime sees
// (docs/behaviour.md#sandbox).
type SandboxNetwork string

// Sandbox networks.
const (
	// SandboxNetHost keeps the host's network (the default; "" means it).
	SandboxNetHost SandboxNetwork = "host"
	// SandboxNetNone gives the runtime a network namespace of its own with
	// a loopback interface only.
	SandboxNetNone SandboxNetwork = "none"
)

// Sandbox check names (docs/behaviour.md#sandbox).
const (
	// CheckSandboxNetInvalid: agent.sandbox_net is neither host nor none.
	CheckSandboxNetInvalid = "agent.sandbox_net.invalid"
	// CheckSandboxWritableInvalid: an agent.sandbox_writable entry is
	// neither an absolute path nor a path under the home directory (~/…).
	CheckSandboxWritableInvalid = "agent.sandbox_writable.invalid"
)

// Sandbox refusal texts (docs/behaviour.md#sandbox). Both are the message
// of an agent_not_found error: what the sandbox needs is not there.
const (
	// MsgSandboxNoBwrap refuses a sandboxed start on a host without
	// bubblewrap; it carries the install hint.
	MsgSandboxNoBwrap = "the sandbox needs bubblewrap (bwrap), which was not found on PATH; " +
		"install it (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap, apk add bubblewrap) " +
		"or run without --sandbox"
	// MsgSandboxRemoteNoBwrap is what the remote command writes to
	// standard error (prefixed "acpdrive: ") when the remote host has no
	// bubblewrap; the session then fails at start-up with port_exit
	// quoting it.
	MsgSandboxRemoteNoBwrap = "the sandbox needs bubblewrap (bwrap), which was not found on the remote host's PATH; " +
		"install it there (apt-get install bubblewrap, dnf install bubblewrap) or run without --sandbox"
)

// SandboxUnsupportedMessage refuses a sandboxed start on a platform other
// than Linux (goos is runtime.GOOS).
func SandboxUnsupportedMessage(goos string) string {
	return fmt.Sprintf("the sandbox (bubblewrap) runs on Linux only; it is not available on %s: run without --sandbox", goos)
}

// Sandbox is the confinement the runtime and everything it spawns run in
// (docs/behaviour.md#sandbox). The zero value runs unconfined.
type Sandbox struct {
	// Enabled runs the runtime under bubblewrap.
	Enabled bool
	// Network is SandboxNetHost or SandboxNetNone; "" means host.
	Network SandboxNetwork
	// Writable are further directories the runtime may write, beside the
	// workspace, the additional directories, its private temporary
	// directory and the runtime state directories (docs/runtimes.md):
	// absolute paths, or "~/…" for a path under the home directory of the
	// host the runtime runs on.
	Writable []string
}

// ParseSandboxNetwork reads agent.sandbox_net / --sandbox-net.
func ParseSandboxNetwork(s string) (SandboxNetwork, error) {
	switch SandboxNetwork(s) {
	case "", SandboxNetHost:
		return SandboxNetHost, nil
	case SandboxNetNone:
		return SandboxNetNone, nil
	}
	return "", fmt.Errorf("sandbox_net %q is neither host nor none", s)
}

// Validate returns the error findings of the sandbox settings, in order.
func (s Sandbox) Validate() []Finding {
	var fs []Finding
	if _, err := ParseSandboxNetwork(string(s.Network)); err != nil {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckSandboxNetInvalid, Message: "agent." + err.Error()})
	}
	for _, w := range s.Writable {
		if !path.IsAbs(w) && !strings.HasPrefix(w, "~/") {
			fs = append(fs, Finding{Severity: SeverityError, Check: CheckSandboxWritableInvalid,
				Message: fmt.Sprintf("agent.sandbox_writable entry %q is neither an absolute path nor ~/…", w)})
		}
	}
	return fs
}

func (s Sandbox) clone() Sandbox {
	s.Writable = slices.Clone(s.Writable)
	return s
}

// ExpandHome turns a "~/…" sandbox_writable entry into a path under home;
// every other entry is returned as written.
func ExpandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return home + "/" + rest
	}
	return p
}

// SandboxTmp is the sandbox's private temporary directory: a fresh tmpfs
// mounted on /tmp, TMPDIR inside the sandbox, gone with the sandbox.
const SandboxTmp = "/tmp"

// SandboxLayout is what a sandbox is built from, with every path already
// resolved for the host the runtime runs on.
type SandboxLayout struct {
	// Workspace is the directory the runtime runs in; writable.
	Workspace string
	// AddDirs are the session's additional directories; writable.
	AddDirs []string
	// TmpKeep are entries of the host's /tmp (absolute paths) that stay
	// visible, read-only, on the private /tmp (SandboxKeptTmp).
	TmpKeep []string
	// Writable are the runtime state directories and every further
	// writable directory; each is made writable when it exists.
	Writable []string
	// Network is the sandbox's network; "" means the host's.
	Network SandboxNetwork
}

// SandboxArgs returns the bubblewrap arguments (without the program name,
// ending with "--", before the runtime's command line) of the sandbox of
// docs/behaviour.md#sandbox: the head of SandboxArgsParts, a read-only
// bind of each TmpKeep entry, then its tail.
func SandboxArgs(l SandboxLayout) []string {
	head, tail := SandboxArgsParts(l)
	args := head
	for _, k := range l.TmpKeep {
		args = append(args, "--ro-bind-try", k, k)
	}
	return append(args, tail...)
}

// SandboxArgsParts returns the bubblewrap arguments around the read-only
// binds of the host's /tmp entries, which a remote shell lists itself.
// Head: the whole filesystem read-only, a fresh /dev and /proc, a private
// tmpfs on /tmp. Tail: read-write binds of the Writable directories that
// exist, the additional directories and the workspace (in that order, so
// a later bind wins where they nest); a PID namespace of its own that
// bubblewrap ends when its parent dies; the network unshared for
// SandboxNetNone; TMPDIR set to /tmp; the workspace as working directory.
func SandboxArgsParts(l SandboxLayout) (head, tail []string) {
	head = []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", SandboxTmp}
	for _, w := range l.Writable {
		tail = append(tail, "--bind-try", w, w)
	}
	for _, d := range l.AddDirs {
		tail = append(tail, "--bind-try", d, d)
	}
	tail = append(tail, "--bind", l.Workspace, l.Workspace, "--unshare-pid", "--die-with-parent")
	if l.Network == SandboxNetNone {
		tail = append(tail, "--unshare-net")
	}
	tail = append(tail, "--setenv", "TMPDIR", SandboxTmp, "--chdir", l.Workspace, "--")
	return head, tail
}

// SandboxOuterShim is the POSIX sh script that starts bubblewrap with
// SIGTERM ignored (run as `sh -c SandboxOuterShim bwrap <args>`): a SIGTERM
// to the session's process group then leaves bubblewrap (and with it the
// sandbox) running while the runtime ends on its own, within the grace
// (docs/behaviour.md#teardown); the SIGKILL of the teardown still ends it.
const SandboxOuterShim = `trap '' TERM; exec "$0" "$@"`

// SandboxInnerShim is the POSIX sh script that runs the runtime inside the
// sandbox (as `/bin/sh -c SandboxInnerShim sh <program> <args>`) with the
// default SIGTERM again, which SandboxOuterShim's ignore would otherwise
// pass on: through env --default-signal=TERM where env has it (GNU
// coreutils 8.31 and later), else as it is.
const SandboxInnerShim = `if env --default-signal=TERM true 2>/dev/null; then exec env --default-signal=TERM "$@"; fi; exec "$@"`

// SandboxKeepPrefix starts the names of acpdrive's own entries in the
// host's /tmp (the beacon's socket directory, a measurement source's
// private directory), which stay visible inside the sandbox.
const SandboxKeepPrefix = "acpdrive-"

// SandboxKeptTmp returns the entries of the host's /tmp that stay visible,
// read-only, on the sandbox's private /tmp: of names (the entries of the
// host's /tmp, symbolic links left out by the caller), those starting with
// SandboxKeepPrefix; and the entry directly below /tmp holding each of
// paths (the runtime's program, acpdrive's own executable) that lies
// there. Every other entry of the host's /tmp is hidden. Once each, in
// that order.
func SandboxKeptTmp(names []string, paths []string) []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, SandboxKeepPrefix) && !strings.Contains(n, "/") {
			add(path.Join(SandboxTmp, n))
		}
	}
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(path.Clean(p), SandboxTmp+"/"); ok {
			first, _, _ := strings.Cut(rest, "/")
			add(path.Join(SandboxTmp, first))
		}
	}
	return out
}

// SandboxCommandPaths returns the words of a command line that are
// absolute paths, or NAME=VALUE assignments whose value is one (as env
// takes them): the files a runtime started through env or an interpreter
// reads, which must stay visible when they lie in the host's /tmp.
func SandboxCommandPaths(words []string) []string {
	var out []string
	for _, word := range words {
		// A word may be a shell fragment of several (an SSH launch's
		// agent.command): each of its fields is looked at.
		for _, w := range strings.Fields(word) {
			if _, v, ok := strings.Cut(w, "="); ok && !strings.HasPrefix(w, "/") {
				w = v
			}
			if w = strings.Trim(w, `'"`); path.IsAbs(w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// SandboxEnvDirs returns the directories under tempDir that the variables
// acpdrive adds to the runtime's environment (NAME=VALUE, the measurement
// source's files) point into: for each value that is an absolute path
// below tempDir, the directory directly below tempDir holding it, once
// each, in order. A sandboxed runtime may write them.
func SandboxEnvDirs(env []string, tempDir string) []string {
	tempDir = path.Clean(tempDir)
	var out []string
	for _, kv := range env {
		_, v, ok := strings.Cut(kv, "=")
		if !ok || !path.IsAbs(v) {
			continue
		}
		rest, ok := strings.CutPrefix(path.Clean(v), tempDir+"/")
		if !ok || tempDir == "/" {
			continue
		}
		first, _, _ := strings.Cut(rest, "/")
		d := path.Join(tempDir, first)
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
