// Package localexec launches the agent runtime as a local subprocess and
// implements ports.Launcher and ports.Process.
//
// A launch validates the workspace (non-empty, absolute, an existing
// directory), resolves the command's program from PATH with no default to
// fall back to, and starts it with the full parent environment plus the
// request's extra variables, in the workspace directory and in a process
// group of its own. Standard input, output and error are plain pipes this
// package creates itself, so reaping the child never waits on a pipe that a
// descendant may still hold open.
//
// Each Process owns two goroutines: a reaper, which closes Exited once the
// direct child has been reaped, and a copier, which keeps the last 8 KiB of
// standard error. Release awaits both (each bounded), so a caller that runs
// the full teardown order leaves nothing running behind it.
//
// Teardown is driven by the caller, one step per method: Terminate sends
// SIGTERM to the group, Kill sends SIGKILL to the group and keeps re-sending
// it for up to two seconds until no live member remains, CloseStdout gives
// up on standard output, and Release drains standard error and closes every
// remaining pipe. On Linux, group liveness is read from /proc and zombies
// count as gone, because an orphaned descendant may never be reaped when
// the machine's init does not reap orphans.
//
// Only Unix-like systems are supported today; elsewhere Launch fails with
// port_exit after validating its request.
package localexec
