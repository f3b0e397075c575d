// Package ports holds the small interfaces through which the application
// reaches the outside world: launching the runtime process, measuring token
// usage, rendering MCP server declarations, and reading the clock.
//
// Adapters (and vendors) implement these interfaces; app consumes them.
// The interfaces are deliberately non-generic so that mockgen from
// github.com/golang/mock can generate the mocks in ports/mocks.
package ports

//go:generate mockgen -destination=mocks/mocks.go -package=mocks github.com/acpdrive/acpdrive/ports Launcher,Process,Clock,MeasurementSource,MCPRenderer
