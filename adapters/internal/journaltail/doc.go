// Package journaltail holds what the token-measurement sources share
// (docs/behaviour.md#token-accounting): Source, the ports.MeasurementSource
// an adapter's Source embeds (its names and Claims's rule, its tuning, and
// the Arm that resolves the runtime's home and makes a start's private
// directory before the adapter's Spec.Open makes the measurement);
// Counters, the mapping of a
// record's counters onto domain.Usage; Private, a start's directory and
// released flag; a Tail that reads the whole lines a journal gained since
// the last read; Wait, the poll and settle loop of a TurnUsage call; and
// the Follower, a whole measurement over a Tail, a Book of turns and
// Wait, for a Journal that says where a session's journal is and what
// each of its lines means to a turn.
//
// An adapter keeps only what is its runtime's own: the names it
// recognises, where its journal is and its format, and its turn rules.
//
// It is not an adapter: adapters import it, and it imports the domain,
// the ports and the standard library only, so no adapter imports another.
package journaltail
