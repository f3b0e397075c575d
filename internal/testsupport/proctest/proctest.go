// Package proctest helps tests check what is left of a process group after
// teardown.
//
// Membership and liveness are read from /proc, so the functions are exact
// on Linux only. Zombies count as gone: an orphan reparented to an init
// that does not reap stays a zombie forever, yet can no longer run or hold
// anything open except its process-table entry. On systems without /proc,
// GroupMembers reports nothing and Alive falls back to signal 0.
package proctest

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procRoot is where the process table is read from.
const procRoot = "/proc"

// pollInterval is how often WaitGroupEmpty looks again.
const pollInterval = 20 * time.Millisecond

// statInfo is what this package needs from /proc/<pid>/stat.
type statInfo struct {
	comm  string
	state byte
	ppid  int
	pgrp  int
}

// zombie reports whether the process has exited but was not reaped (or is
// being torn down).
func (s statInfo) zombie() bool { return s.state == 'Z' || s.state == 'X' }

// parseStat parses the contents of /proc/<pid>/stat:
// "pid (comm) state ppid pgrp ...". The command name may contain spaces
// and parentheses, so it runs from the first '(' to the last ')'.
func parseStat(data []byte) (statInfo, bool) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open {
		return statInfo{}, false
	}
	fields := bytes.Fields(data[closing+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return statInfo{}, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil {
		return statInfo{}, false
	}
	pgrp, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return statInfo{}, false
	}
	return statInfo{comm: string(data[open+1 : closing]), state: fields[0][0], ppid: ppid, pgrp: pgrp}, true
}

// Link is a live process's parent and process group.
type Link struct{ PPID, PGRP int }

// Live returns every live (non-zombie) process with its parent and
// process group, read from /proc; nil when /proc is unavailable.
func Live() map[int]Link {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	all := map[int]Link{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if st, ok := readStat(pid); ok && !st.zombie() {
			all[pid] = Link{PPID: st.ppid, PGRP: st.pgrp}
		}
	}
	return all
}

// readStat reads and parses /proc/<pid>/stat.
func readStat(pid int) (statInfo, bool) {
	data, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return statInfo{}, false
	}
	return parseStat(data)
}

// GroupMembers returns, in ascending order, the live (non-zombie) processes
// whose process group is pgid. It returns nil when there are none or when
// /proc is unavailable.
func GroupMembers(pgid int) []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.pgrp != pgid || st.zombie() {
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}

// Alive reports whether pid names a process that has not exited. A zombie
// is not alive.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if _, err := os.Stat(procRoot); err == nil {
		st, ok := readStat(pid)
		return ok && !st.zombie()
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return proc.Signal(syscall.Signal(0)) == nil
}

// WaitGroupEmpty waits up to within for GroupMembers(pgid) to become
// empty. If members remain, it marks the test failed (t.Errorf, so it may
// be called from cleanups and other goroutines) naming each survivor with
// its command line.
func WaitGroupEmpty(t testing.TB, pgid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		members := GroupMembers(pgid)
		if len(members) == 0 {
			return
		}
		if !time.Now().Before(deadline) {
			descs := make([]string, 0, len(members))
			for _, pid := range members {
				descs = append(descs, describe(pid))
			}
			t.Errorf("process group %d still has %d live member(s) after %s: %s",
				pgid, len(members), within, strings.Join(descs, "; "))
			return
		}
		time.Sleep(pollInterval)
	}
}

// describe renders a process as `pid <n> [<state>] "<cmdline>"`, falling
// back to its command name when the command line is empty (kernel threads,
// processes being torn down).
func describe(pid int) string {
	st, _ := readStat(pid)
	cmdline := st.comm
	if data, err := os.ReadFile(procRoot + "/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
		if s := strings.TrimRight(strings.ReplaceAll(string(data), "\x00", " "), " "); s != "" {
			cmdline = s
		}
	}
	state := "?"
	if st.state != 0 {
		state = string(st.state)
	}
	return "pid " + strconv.Itoa(pid) + " [" + state + "] " + strconv.Quote(cmdline)
}

// WithCmdline returns the live processes whose command line (its words
// joined by spaces) contains s, read from /proc; nothing on systems
// without /proc.
func WithCmdline(s string) []int {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(procRoot + "/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if strings.Contains(string(bytes.ReplaceAll(data, []byte{0}, []byte{' '})), s) && Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// WaitCmdlineGone waits up to within for WithCmdline(s) to become empty;
// if processes remain it marks the test failed naming each.
func WaitCmdlineGone(t testing.TB, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := WithCmdline(s)
		if len(left) == 0 {
			return
		}
		if !time.Now().Before(deadline) {
			descs := make([]string, 0, len(left))
			for _, pid := range left {
				descs = append(descs, describe(pid))
			}
			t.Errorf("%d process(es) running %q still live after %s: %s", len(left), s, within, strings.Join(descs, "; "))
			return
		}
		time.Sleep(pollInterval)
	}
}
