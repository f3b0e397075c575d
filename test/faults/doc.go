// Package faults is acpdrive's fault suite: hostile ACP runtimes that try
// to hang, leak or fool the client, each scenario asserting the error kind
// and bound docs/behaviour.md promises and that nothing of the runtime
// outlives its teardown.
//
// The hostile runtimes are this package's own test binary, re-executed as
// `<test binary> hostile <behaviour> [args...]` (see hostile_test.go). They
// run in the workspace directory the test gives them and leave notes
// there: "pids" (one process ID a line, for every process of theirs that
// must be gone after teardown) and "report" (what they observed on the
// wire, one "key value" a line).
//
// Run it with `make faults`; the soak scenario is skipped under -short.
package faults
