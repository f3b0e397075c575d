// Package bench compares acpdrive's session client with the Agent Client
// Protocol Go SDK on the same notification stream: a fresh reference agent
// (`acpdrive agent`) streaming a `#burst N` turn of agent_message_chunk
// updates as fast as it can.
//
// It is a separate module so that the SDK never enters the dependency graph
// of acpdrive itself. Everything lives in its tests:
//
//	go test -run '^$' -bench . -benchmem -count=1 .   # the side-by-side benchmarks
//	go test ./...                                      # the million-notification burst test
package bench
