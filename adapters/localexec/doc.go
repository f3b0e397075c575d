// Package localexec runs the agent runtime as a local subprocess. It
// implements ports.Launcher, ports.Plan and ports.Process.
//
// Prepare validates the workspace (non-empty, valid UTF-8 since ACP
// carries paths as JSON strings, absolute, an existing directory) and
// resolves the command's program from PATH with no default to fall back
// to; it starts nothing. A Plan's Start, which may run more than once,
// starts the program with the full parent environment plus the caller's
// variables (which override inherited ones), in the workspace directory
// and in a process group of its own. Standard input, output and error are
// plain pipes this package creates itself, so reaping the child never
// waits on a pipe that a descendant may still hold open.
//
// Each Process owns two goroutines: a reaper, which closes Exited once the
// direct child (the leader) has been reaped, and a copier, which keeps the
// last 8 KiB of standard error. On Linux the reaper waits on a pidfd of
// the leader in the Go runtime's poller and blocks no OS thread, so a
// process with thousands of live sessions has a bounded number of threads;
// elsewhere (and without pidfds) it blocks one thread in wait. Release awaits both (each bounded), so a
// caller that runs the full teardown order leaves nothing running behind
// it.
//
// Teardown is driven by the caller, one step per method: Terminate sends
// SIGTERM, Kill sends SIGKILL and keeps re-sending it for up to two seconds
// until nothing it knows of is alive, CloseStdout gives up on standard
// output, and Release drains standard error and closes every remaining
// pipe. Both signals go to the process group and to the leader by its own
// PID, since a leader may move itself to another group; the leader is
// signalled through its os.Process, which never reaches a later process
// that reuses the PID, and no signal ever goes to PID 1 or group 1 or
// below. On Linux, liveness is read from /proc and zombies count as gone,
// because an orphaned descendant may never be reaped when the machine's
// init does not reap orphans. What is still alive when the window ends is
// logged once at Warn and returned as a *domain.SurvivorsError naming each
// process with its command name.
//
// # Containment
//
// A descendant that leaves the group (setsid, setpgid, a double fork) is
// out of reach of a group signal. With Options.Contain on Linux, Start
// gives the runtime a random tag in the ACPDRIVE_TREE_TAG environment
// variable, which its descendants inherit, and makes this process a child
// subreaper (PR_SET_CHILD_SUBREAPER), so that orphans of the tree are
// reparented here rather than to init. Terminate and each round of Kill
// then find the tree and signal, besides the group and the leader, every
// process that is in the leader's group, carries the tag, was seen as a
// member before (same PID and start time), or descends by parent PID from
// any of those. The tree is found from its own processes, never by reading
// the whole process table: the leader, the members last seen, the
// children of this process's main thread that lead no other session (the
// kernel reparents the subreaper's orphans there; leaders are forked on
// other threads), and the descendants of every member, listed by
// /proc/<pid>/task/<tid>/children; only when this process could not
// become the subreaper, or the kernel does not list children, is the
// whole table read instead. Each is signalled through a pidfd checked
// against its start time, so a reused PID is never hit; no process older
// than the leader is ever a member. Kill reaps the members that became
// zombie children of this process, each by its own PID with wait4 (never a
// wildcard wait, which would take statuses that os/exec and other
// sessions' reapers are waiting for), and runs another round while such a
// zombie is about to become reapable.
//
// Limits: a process the leader itself creates with CLONE_PARENT is this
// process's child on the leader's thread, so a walk reaches it through the
// group only; a descendant that both scrubs or replaces its environment and
// leaves the group escapes containment unless a scan saw it while its
// parent chain still led to the runtime (Terminate's scan, run while the
// leader is usually alive, is what catches most double forks); a process
// that exits before any scan saw it and is not in the group stays a zombie
// child of this process until this process exits; a process of another
// user is not found by its tag and may not be signalled; and the
// subreaper attribute is process-wide, so orphans of unrelated
// subprocesses are reparented here too and are not reaped by this
// package. Off Linux, Contain has no effect (a Warn says so at a
// Launcher's first Start) and teardown reaches the group and the leader
// only.
//
// # Windows
//
// On Windows (process_windows.go) the child is created suspended and as
// the root of a new process group, assigned to a Job Object with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and only then resumed. Terminate
// sends CTRL_BREAK_EVENT to the group (delivered only when this process
// and the child share a console); Kill terminates the job and the leader
// and re-sends as on Unix while a process of the job is alive; Release
// closes the job, which ends anything left in it. A failed assignment is
// logged at Warn and the child runs without a job; a failed resume is
// logged at Warn and fails the start with port_exit; a start whose context
// is done when the resume is reached is terminated unresumed and ends
// turn_cancelled. Prepare refuses a program that is a .bat or .cmd file
// (agent_not_found). docs/windows.md has the details and what the tests
// under Wine cannot exercise.
//
// Unix-like systems and Windows are supported; elsewhere Start fails with
// port_exit after Prepare has validated the request.
package localexec
