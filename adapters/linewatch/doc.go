// Package linewatch is a ports.Launcher that wraps another and shows the
// JSON-RPC lines passing to and from each runtime it starts to hooks,
// changing none of them: how a holder of a held session notes when a
// turn starts and ends without a client attached
// (docs/behaviour.md#held-sessions).
//
// Each Write to the runtime's standard input is taken as one whole line
// (as acpdrive serve writes them) and given to Hooks.Sent before it is
// written. What is read from the runtime's standard output is split into
// lines and each given to Hooks.Received, only while Hooks.Watching
// reports true: a line begun while nothing watched, or longer than
// Hooks.MaxLine, is not given. Nothing is kept between lines when
// nothing watches.
package linewatch
