//go:build !windows

package localexec

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// wardenScript is the warden's program, for /bin/sh: it reads
// registrations from its standard input ("+g PGID", "-g PGID", "+t TAG",
// "-t TAG"), one a line, and once that input ends — the process that
// started it is gone, however it went, since only that process holds the
// pipe's other end — it SIGKILLs every process group still registered
// and, where /proc lists environments, every process carrying a
// registered containment tag (docs/behaviour.md#containment). It ignores
// the signals a terminal sends, so it outlives the process it watches by
// exactly its sweep.
const wardenScript = `trap '' INT TERM HUP QUIT
groups=
tags=
drop() { out=; for x in $1; do [ "$x" = "$2" ] || out="$out $x"; done; printf '%s' "$out"; }
while read -r op kind val; do
	case "$op$kind" in
	+g) groups="$groups $val" ;;
	-g) groups=$(drop "$groups" "$val") ;;
	+t) tags="$tags $val" ;;
	-t) tags=$(drop "$tags" "$val") ;;
	esac
done
for g in $groups; do kill -KILL -- "-$g" 2>/dev/null; done
[ -n "$tags" ] || exit 0
for f in /proc/[0-9]*/environ; do
	for t in $tags; do
		if tr '\0' '\n' <"$f" 2>/dev/null | grep -qxF "$t"; then
			p=${f#/proc/}
			kill -KILL "${p%/environ}" 2>/dev/null
		fi
	done
done
`

// theWarden is this process's warden, started with the first runtime.
// Like the subreaper attribute it belongs to the whole process.
var theWarden warden

// warden kills what this process started once this process is gone: the
// runtime's process group and, when contained, its tagged tree. It is a
// small /bin/sh child of its own group, reading registrations on a pipe
// whose write end only this process holds (close-on-exec: no runtime
// inherits it).
type warden struct {
	once sync.Once
	mu   sync.Mutex
	w    *os.File // nil when the warden could not be started
}

// start starts the warden once; a failure is logged once and leaves
// runtimes contained only while this process lives.
func (wd *warden) start(logger *slog.Logger) {
	wd.once.Do(func() {
		r, w, err := os.Pipe()
		if err != nil {
			logger.Warn("the warden could not be started; runtimes are contained only while this process lives", slog.String("error", err.Error()))
			return
		}
		defer func() { _ = r.Close() }()
		cmd := exec.Command("/bin/sh", "-c", wardenScript)
		cmd.Stdin = r
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			_ = w.Close()
			logger.Warn("the warden could not be started; runtimes are contained only while this process lives", slog.String("error", err.Error()))
			return
		}
		// Never waited for: it ends only once this process is gone. Its
		// Process is released so that nothing here holds it.
		_ = cmd.Process.Release()
		wd.w = w
	})
}

// tell writes one registration; a warden that is gone is not an error
// of the runtime's (logged at Debug).
func (wd *warden) tell(logger *slog.Logger, op, kind, val string) {
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w == nil || val == "" {
		return
	}
	if _, err := fmt.Fprintf(wd.w, "%s %s %s\n", op, kind, val); err != nil {
		logger.Debug("the warden did not take a registration", slog.String("error", err.Error()))
	}
}

// guard registers a started runtime's group (and its tree's tag entry,
// "ACPDRIVE_TREE_TAG=…", "" for none) with the warden and returns what unregisters them, once the
// teardown has killed the tree.
func guard(logger *slog.Logger, pgid int, entry string) func() {
	theWarden.start(logger)
	g := strconv.Itoa(pgid)
	theWarden.tell(logger, "+", "g", g)
	theWarden.tell(logger, "+", "t", entry)
	var once sync.Once
	return func() {
		once.Do(func() {
			theWarden.tell(logger, "-", "g", g)
			theWarden.tell(logger, "-", "t", entry)
		})
	}
}
