// Package domain is the pure core of acpdrive: normalized events, error kinds
// and their retryability, stop-reason disposition, tool-kind normalization,
// message accumulation, the capability record, and the configuration model
// with its validation.
//
// It imports the standard library only, performs no I/O and starts no
// goroutines, so orchestrators can depend on it without pulling in any
// transport.
package domain
