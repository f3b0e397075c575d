// Package logs holds the adapters' one rule for an optional logger: a nil
// *slog.Logger discards everything.
package logs

import "log/slog"

// OrDiscard returns l, or a logger that discards every record when l is nil.
func OrDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
