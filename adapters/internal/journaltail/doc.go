// Package journaltail holds the mechanics the token-measurement sources
// share when they read a runtime's JSONL journal
// (docs/behaviour.md#token-accounting): a Tail that reads the whole lines
// a journal gained since the last read, Wait, the poll and settle loop of
// a TurnUsage call, the Follower that implements a measurement over both
// for a Journal (where the session's journal is, how a line changes the
// turn), and the plumbing of Claims and Arm.
//
// It is not an adapter: adapters import it, and it imports the domain and
// the standard library only, so no adapter imports another.
package journaltail
