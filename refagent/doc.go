// Package refagent is the acpdrive reference agent: a deterministic,
// scriptable Agent Client Protocol v1 agent (the server side) served by
// "acpdrive agent" on stdin/stdout as newline-delimited JSON-RPC 2.0.
//
// It is what acpdrive drives when no runtime is named, and what the tests of
// the client use to produce every behaviour the client must handle: each
// session/update variant (and unknown ones), permission and elicitation
// requests, every stop reason, errors, undecodable answers, garbage and
// oversized lines, crashes, orphaned descendants holding stdout, hangs, slow
// answers and notification bursts.
//
// Behaviour is a [Script]: how initialize and other methods are answered and
// a set of named [Turn]s, each a list of [Step]s. A prompt whose first text
// block starts with "#NAME" runs the turn NAME (the rest of the text is the
// turn's argument); any other prompt runs the script's default turn, by
// default an echo of the prompt text. Built-in scripts ([Scenario]) carry
// every named turn, so "#tools" or "#crash" work under any scenario.
//
// The package depends on the standard library only, and on no other package
// of this module: the agent stays independent of the client it tests.
// docs/reference-agent.md documents the flags, the script format and every
// named scenario.
package refagent
