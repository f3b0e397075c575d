// Package gemini_measure will implement ports.MeasurementSource for Gemini
// CLI, reading token figures from the runtime's local telemetry file (see
// the measurement issue and the specification's "Token accounting").
//
// It is a placeholder until that issue lands; until then every session's
// "token counts" capability is in the gap state and no token_usage event is
// emitted.
package gemini_measure
