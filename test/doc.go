// Package test holds acpdrive's cross-cutting tests: the hexagon's import
// rules, and (later) the interop suite against real runtimes.
package test
