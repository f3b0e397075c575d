// Package bench compares acpdrive's session client with the Agent Client
// Protocol Go SDK and with a bare encoding/json floor on the same
// notification streams: a fresh reference agent (`acpdrive agent`)
// streaming `#burst N` turns of agent_message_chunk updates as fast as it
// can.
//
// It is a separate module so that the SDK never enters the dependency graph
// of acpdrive itself. Everything lives in its tests (BENCHMARKS.md describes
// each benchmark and its metrics), except cmd/benchplot, which draws
// docs/bench.svg from their output:
//
//	go test -run '^$' -bench . -benchmem -count=3 .   # every benchmark (make bench)
//	go test ./...                                      # the checks (make bench-check)
package bench
