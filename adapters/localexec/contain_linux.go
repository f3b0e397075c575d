//go:build linux

package localexec

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/acpdrive/acpdrive/domain"
)

// treeTagVar is the environment variable that carries a runtime's tag to
// the runtime and, by inheritance, to its descendants.
const treeTagVar = "ACPDRIVE_TREE_TAG"

// The subreaper attribute belongs to the whole process and is set once.
var (
	subreaperOnce sync.Once
	subreaperErr  error
)

// enableSubreaper makes this process a child subreaper, so that an
// orphaned descendant of a runtime is reparented to it rather than to
// init, and can be reaped here. A failure is logged once; containment
// then still finds the tree, but orphans go to init.
func enableSubreaper(logger *slog.Logger) {
	subreaperOnce.Do(func() {
		subreaperErr = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		if subreaperErr != nil {
			logger.Warn("child subreaper could not be enabled", slog.String("error", subreaperErr.Error()))
		}
	})
}

// liveLeaders holds the PID of every leader this package started that is
// not reaped yet, with a count (a PID is reused only after a reap, but the
// count keeps a late forget harmless). walkTree skips them among this
// process's children: another session's leader is never a member, so no
// session reads the /proc entries of the others.
var liveLeaders = struct {
	mu  sync.Mutex
	pid map[int]int
}{pid: map[int]int{}}

// noteLeader records a started leader.
func noteLeader(pid int) {
	liveLeaders.mu.Lock()
	liveLeaders.pid[pid]++
	liveLeaders.mu.Unlock()
}

// forgetLeader drops a leader as reap reaps it, both under the lock, so
// that no walk ever takes a PID reused after the reap for a leader (reap
// is a wait that returns at once: the leader is a zombie).
func forgetLeader(pid int, reap func()) {
	liveLeaders.mu.Lock()
	defer liveLeaders.mu.Unlock()
	reap()
	if liveLeaders.pid[pid]--; liveLeaders.pid[pid] <= 0 {
		delete(liveLeaders.pid, pid)
	}
}

// otherThanLeaders returns the PIDs of pids that lead no session of this
// package, keeping own (the caller's leader).
func otherThanLeaders(pids []int, own int) []int {
	liveLeaders.mu.Lock()
	defer liveLeaders.mu.Unlock()
	out := pids[:0]
	for _, pid := range pids {
		if _, ok := liveLeaders.pid[pid]; !ok || pid == own {
			out = append(out, pid)
		}
	}
	return out
}

// tree is the contained process tree of one started runtime: the leader,
// its process group, its descendants by parent, and every process that
// carries the runtime's tag. It is safe for concurrent use.
type tree struct {
	entry string // treeTagVar=<tag>, as it appears in an environment
	self  int    // this process, never a member
	// walk: the tree is found from its own processes and this process's
	// children (see walkTree) instead of by reading the whole process
	// table; set when this process is a child subreaper and the kernel
	// lists children in /proc.
	walk bool

	mu          sync.Mutex
	attached    bool
	leader      int
	leaderStart uint64         // the leader's start time: members are never older
	pgid        int            // the group the leader was started in
	known       map[int]uint64 // every member last seen: PID → start time
}

// newTree prepares the containment of one runtime: a fresh random tag,
// and this process made a child subreaper.
func newTree(logger *slog.Logger) (*tree, error) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return nil, fmt.Errorf("/proc cannot be read: %w", err)
	}
	enableSubreaper(logger)
	self := os.Getpid()
	return &tree{
		entry: treeTagVar + "=" + rand.Text(),
		self:  self,
		walk:  subreaperErr == nil && childrenListed(self),
		known: map[int]uint64{},
	}, nil
}

// envEntry is the variable to add to the runtime's environment.
func (t *tree) envEntry() string { return t.entry }

// attach records the started leader. It must run before the leader can
// be reaped, while its /proc entry is certain to exist.
func (t *tree) attach(pid, pgid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.leader, t.pgid = pid, pgid
	if st, ok := readProcStat(pid); ok {
		t.leaderStart = st.start
		t.attached = true
	}
}

// signal finds the tree, sends sig to every live member but the leader
// (which the caller signals through its os.Process) and the spared, and
// reaps the members that are zombie children of this process. It returns
// the members that were alive when it looked, and pending: a zombie
// member is about to become reapable here (its parent was itself a member
// when it looked, so it is being reparented here; or it is a zombie child
// of this process not yet ready to be waited for), so another round can
// reap it.
func (t *tree) signal(sig sigKind, spare func(pid int) bool) (live []domain.Survivor, pending bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	scan := t.scan
	if t.walk {
		scan = t.walkTree
	}
	members, err := scan()
	if err != nil {
		return nil, false, err
	}
	isMember := make(map[int]bool, len(members))
	for _, m := range members {
		isMember[m.pid] = true
	}
	var errs []error
	for _, m := range members {
		if t.isLeader(m) {
			continue // reaped by os/exec, signalled by the caller
		}
		if m.gone() {
			switch {
			case m.ppid == t.self:
				if !reapOrphan(m) {
					pending = true
				}
			case isMember[m.ppid]:
				pending = true
			}
			continue
		}
		name := commandName(m.pid)
		if name == "" {
			name = m.comm
		}
		live = append(live, domain.Survivor{PID: m.pid, Name: name})
		if spare != nil && spare(m.pid) {
			continue
		}
		if err := signalProcess(m, unixSignal(sig)); err != nil {
			errs = append(errs, fmt.Errorf("localexec: signal process %d: %w", m.pid, err))
		}
	}
	return live, pending, errors.Join(errs...)
}

// isLeader reports whether m is the leader itself, not a later process
// that reuses its PID.
func (t *tree) isLeader(m procStat) bool {
	return t.attached && m.pid == t.leader && m.start == t.leaderStart
}

// scan reads the whole process table and returns the members of the tree
// in PID order, zombies included; it is the fallback of walkTree, which
// finds the same members (see there). A process is a member when it is the
// leader, is in the leader's group, was a member when last seen (same PID
// and start time), carries the tag, or has a member as its parent. No
// member is older than the leader, and this process and PID 1 never are.
func (t *tree) scan() ([]procStat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("localexec: read the process table: %w", err)
	}
	all := make(map[int]procStat, len(entries))
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == t.self {
			continue
		}
		st, ok := readProcStat(pid)
		if !ok || st.start < t.leaderStart {
			continue // gone while we looked, or older than the runtime
		}
		all[pid] = st
		children[st.ppid] = append(children[st.ppid], pid)
	}

	member := map[int]bool{}
	var queue []int
	add := func(pid int) {
		if !member[pid] {
			member[pid] = true
			queue = append(queue, pid)
		}
	}
	for pid, st := range all {
		start, seen := t.known[pid]
		switch {
		case t.isLeader(st),
			t.attached && st.pgrp == t.pgid,
			seen && start == st.start,
			!st.gone() && hasEnvEntry(pid, t.entry):
			add(pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, child := range children[pid] {
			add(child)
		}
	}

	members := make([]procStat, 0, len(member))
	for pid := range member {
		members = append(members, all[pid])
	}
	return t.remember(members), nil
}

// remember records members as the known ones and returns them in PID
// order.
func (t *tree) remember(members []procStat) []procStat {
	known := make(map[int]uint64, len(members))
	for _, m := range members {
		known[m.pid] = m.start
	}
	t.known = known
	slices.SortFunc(members, func(a, b procStat) int { return a.pid - b.pid })
	return members
}

// walkTree finds the members scan would find by reading only the
// processes that can be members, so that its cost does not grow with the
// number of other sessions' processes (docs/behaviour.md#containment).
// This process being a child subreaper, every process of the tree is the
// leader, a descendant of a live member, or an orphan reparented to this
// process. So the candidates are the leader, the members known from the
// last look, and this process's children that lead no other session;
// each candidate that is a member by scan's rules (leader, leader's group,
// known, tag) brings in its descendants, read from
// /proc/<pid>/task/<tid>/children.
func (t *tree) walkTree() ([]procStat, error) {
	member := map[int]procStat{}
	var queue []procStat
	consider := func(pid, parent int) {
		if pid <= 1 || pid == t.self {
			return
		}
		if _, ok := member[pid]; ok {
			return
		}
		st, ok := readProcStat(pid)
		if !ok || st.start < t.leaderStart {
			return // gone while we looked, or older than the runtime
		}
		start, seen := t.known[pid]
		switch {
		case parent > 0 && st.ppid == parent,
			t.isLeader(st),
			t.attached && st.pgrp == t.pgid,
			seen && start == st.start,
			!st.gone() && hasEnvEntry(pid, t.entry):
			member[pid] = st
			queue = append(queue, st)
		}
	}
	descend := func() {
		for len(queue) > 0 {
			st := queue[0]
			queue = queue[1:]
			children, err := childrenOf(st.pid)
			if err != nil {
				continue // gone while we looked
			}
			for _, c := range children {
				consider(c, st.pid)
			}
		}
	}
	if t.attached {
		consider(t.leader, 0)
	}
	for pid := range t.known {
		consider(pid, 0)
	}
	descend()
	// A member that exits moves its children here. This process's
	// children are read after every member's, so a process that left a
	// member's list before that list was read is in this one; and again
	// until a reading brings no new member, for the orphans of the
	// members it brought (docs/behaviour.md#containment).
	for {
		kids, err := orphanCandidates(t.self)
		if err != nil {
			return nil, fmt.Errorf("localexec: list this process's children: %w", err)
		}
		found := len(member)
		for _, pid := range otherThanLeaders(kids, t.leader) {
			consider(pid, 0)
		}
		descend()
		if len(member) == found {
			break
		}
	}
	members := make([]procStat, 0, len(member))
	for _, st := range member {
		members = append(members, st)
	}
	return t.remember(members), nil
}

// childrenListed reports whether the kernel lists a process's children
// in /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN).
func childrenListed(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	return err == nil
}

// orphanCandidates lists the children of this process (self) an orphan
// of a tree can be among. The kernel reparents an orphan to the first
// thread of the subreaper that is not exiting, in thread order: the main
// thread, whose ID is the process's (so since Linux 4.1; pidfds, which
// the check stands on, came with 5.3). Reading that one thread's list
// leaves out the leaders forked by the other threads, which cost the
// kernel about half a microsecond each to list. On an older kernel, the
// children of every thread.
func orphanCandidates(self int) ([]int, error) {
	if !pidfdUsable() {
		return childrenOf(self)
	}
	return taskChildren("/proc/"+strconv.Itoa(self)+"/task/", strconv.Itoa(self))
}

// taskChildren lists the children of one thread, read from
// dir/<tid>/children.
func taskChildren(dir, tid string) ([]int, error) {
	data, err := os.ReadFile(dir + tid + "/children")
	if err != nil {
		return nil, err
	}
	var out []int
	for len(data) > 0 {
		var f []byte
		if i := bytes.IndexByte(data, ' '); i >= 0 {
			f, data = data[:i], data[i+1:]
		} else {
			f, data = data, nil
		}
		if child, err := strconv.Atoi(string(bytes.TrimSpace(f))); err == nil {
			out = append(out, child)
		}
	}
	return out, nil
}

// childrenOf lists the children of every thread of pid, zombies
// included.
func childrenOf(pid int) ([]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, task := range tasks {
		kids, err := taskChildren(dir, task.Name())
		if err != nil {
			continue // the thread ended while we looked
		}
		out = append(out, kids...)
	}
	return out, nil
}

// hasEnvEntry reports whether the environment pid started with holds
// entry exactly. An environment that cannot be read holds nothing.
func hasEnvEntry(pid int, entry string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := []byte(entry)
	for len(data) > 0 {
		var e []byte
		if i := bytes.IndexByte(data, 0); i >= 0 {
			e, data = data[:i], data[i+1:]
		} else {
			e, data = data, nil
		}
		if bytes.Equal(e, want) {
			return true
		}
	}
	return false
}

// sameProcess reports whether m's PID still names the process m was read
// from.
func sameProcess(m procStat) bool {
	st, ok := readProcStat(m.pid)
	return ok && st.start == m.start
}

// signalProcess sends sig to the process m names, never to a later
// process that reuses its PID: through a pidfd, opened and then checked
// against the start time, or, on a kernel without pidfds, by a check just
// before the signal. A process already gone is not an error.
func signalProcess(m procStat, sig unix.Signal) error {
	fd, err := unix.PidfdOpen(m.pid, 0)
	if err == nil {
		defer func() { _ = unix.Close(fd) }()
		if !sameProcess(m) {
			return nil
		}
		err = unix.PidfdSendSignal(fd, sig, nil, 0)
	} else if !errors.Is(err, unix.ESRCH) {
		if !sameProcess(m) {
			return nil
		}
		err = unix.Kill(m.pid, sig)
	}
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// reapOrphan collects the exit status of m, a zombie member reparented to
// this process, by its own PID only: a wildcard wait would take statuses
// that os/exec and other sessions are waiting for. It reports false when
// m is not reapable yet: /proc shows a multi-threaded process as a zombie
// while its other threads are still exiting, and until they have, the
// wait finds nothing.
func reapOrphan(m procStat) bool {
	if m.pid <= 1 || !sameProcess(m) {
		return true // reaped meanwhile
	}
	var ws unix.WaitStatus
	pid, err := unix.Wait4(m.pid, &ws, unix.WNOHANG|unix.WALL, nil)
	if err != nil {
		return true // ECHILD: someone else's child after all; leave it be
	}
	return pid == m.pid
}

// walks reports whether the tree is found by walkTree, which also finds
// every live member of the leader's group.
func (t *tree) walks() bool { return t.walk }

// scanWholeTable makes the tree read the whole process table instead of
// walking (tests of the fallback).
func (t *tree) scanWholeTable() { t.walk = false }
