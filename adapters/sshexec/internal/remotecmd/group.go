package remotecmd

import (
	"bytes"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/acpdrive/acpdrive/domain"
)

// PGIDMarker starts the line the remote command writes to standard error
// first (MarkedCommand): the remote shell's own PID, which is also its
// process group's ID, since sshd starts every session's command in a
// session of its own. The transport takes the line out of the runtime's
// standard error (PGIDFilter) and ends the group by that ID at the force
// step (KillGroupCommand).
const PGIDMarker = "acpdrive-pgid "

// maxMarkerScan bounds how much standard error is searched for the marker
// line: the lines before it are the ssh client's own and a remote login
// script's, never the runtime's.
const maxMarkerScan = 8 << 10

// ExitGroupAlive is KillGroupCommand's exit status when the group still
// had live members after its last round.
const ExitGroupAlive = 3

// GroupSurvivorName names a remote process group reported as a survivor.
const GroupSurvivorName = "process group"

// MarkedCommand returns RemoteCommand(s) preceded by the line that writes
// the PGIDMarker line to standard error.
func MarkedCommand(s RemoteSpec) string {
	return `printf '` + PGIDMarker + `%s\n' "$$" >&2` + "\n" + RemoteCommand(s)
}

// PGIDFilter passes standard error to W, less the first PGIDMarker line,
// whose group ID it records. Only the stderr copier writes to it.
type PGIDFilter struct {
	// W receives everything but the marker line.
	W io.Writer

	pgid    atomic.Int64
	done    bool   // the marker was found, or the search given up
	pending []byte // the line being searched, until its newline
	scanned int
}

// PGID returns the remote process group's ID, 0 until the marker arrived.
func (f *PGIDFilter) PGID() int64 { return f.pgid.Load() }

// Write passes b on, holding back the incomplete line while the marker is
// still being searched for.
func (f *PGIDFilter) Write(b []byte) (int, error) {
	n := len(b)
	for !f.done && len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.pending = append(f.pending, b...)
			b = nil
			if len(f.pending) > maxMarkerScan {
				f.Flush()
			}
			break
		}
		line := append(f.pending, b[:i+1]...)
		f.pending, b = nil, b[i+1:]
		if pg, ok := parseMarker(line); ok {
			f.pgid.Store(pg)
			f.done = true
			break
		}
		_, _ = f.W.Write(line)
		if f.scanned += len(line); f.scanned > maxMarkerScan {
			f.done = true
		}
	}
	if len(b) > 0 {
		_, _ = f.W.Write(b)
	}
	return n, nil
}

// Flush gives up the search and passes on what was held back; the
// copier calls it when standard error ends.
func (f *PGIDFilter) Flush() {
	f.done = true
	if len(f.pending) > 0 {
		_, _ = f.W.Write(f.pending)
		f.pending = nil
	}
}

func parseMarker(line []byte) (int64, bool) {
	s, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte(PGIDMarker))
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || n <= 1 {
		return 0, false
	}
	return n, true
}

// SignalGroupCommand sends sig (TERM, KILL) to the remote group pg once.
func SignalGroupCommand(sig string, pg int64) string {
	return "kill -s " + sig + " -- -" + strconv.FormatInt(pg, 10) + " 2>/dev/null; exit 0"
}

// KillGroupCommand is the remote loop of the force step: it KILLs group pg
// every 50 ms and exits 0 once the group is empty or holds only zombies,
// or ExitGroupAlive after rounds rounds. Before it exits it writes the
// number of rounds that found live members to standard output (0: the
// first KILL left nothing running), which KillRounds reads.
//
// A member killed after its parent ended is an orphan: it stays in the
// group as a zombie until the remote init reaps it, and kill(2) still
// succeeds on a group of zombies. Some inits reap lazily (seconds later),
// and the containment wrapper's watchdog is such an orphan once the
// runtime has exited on its own, so a group whose remaining members are
// all zombies counts as empty: nothing of it runs. The zombie check uses
// ps and awk when the remote host has them; without them the kill's own
// answer decides.
func KillGroupCommand(pg int64, rounds int) string {
	g := strconv.FormatInt(pg, 10)
	return `acpdrive_live() {
  command -v ps >/dev/null 2>&1 && command -v awk >/dev/null 2>&1 || return 0
  acpdrive_ps=$(ps -A -o pgid= -o stat= 2>/dev/null) || return 0
  printf '%s\n' "$acpdrive_ps" | awk -v g=` + g + ` '$1 == g && $2 !~ /^Z/ { live = 1 } END { exit !live }'
}
i=0
while kill -s KILL -- -` + g + ` 2>/dev/null; do
  acpdrive_live || { echo "$i"; exit 0; }
  i=$((i+1)); [ "$i" -ge ` + strconv.Itoa(rounds) + ` ] && { echo "$i"; exit ` + strconv.Itoa(ExitGroupAlive) + `; }
  sleep 0.05 2>/dev/null || sleep 1
done
echo "$i"
exit 0
`
}

// KillRounds reads the rounds KillGroupCommand wrote to standard output;
// ok is false when out holds no count (the command did not get that far).
func KillRounds(out []byte) (rounds int, ok bool) {
	n, err := strconv.Atoi(string(bytes.TrimSpace(out)))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// GroupSurvivors is what the force step reports for remote group pg on
// host: the group, when KillGroupCommand exited with code, else nothing.
func GroupSurvivors(code int, pg int64, host string) []domain.Survivor {
	if code != ExitGroupAlive {
		return nil
	}
	return []domain.Survivor{{PID: int(pg), Host: host, Name: GroupSurvivorName}}
}
