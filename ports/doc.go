// Package ports holds the small interfaces through which the application
// reaches the outside world: a Launcher that prepares a Plan that starts a
// Process (a local process, the ssh binary, a native SSH channel), the
// MeasurementSource a vendor adds to read a runtime's token usage, the
// MCPSource that reads tool-server declarations, the ToolServerBeacon
// that confirms the runtime starts them, the Clock, and the Observer that
// receives a session's events (with SessionObserver, one
// SessionObservation per session: its steps, notices and turns).
//
// Adapters (and vendors) implement these interfaces; app consumes them.
// The interfaces are deliberately non-generic so that mockgen from
// github.com/golang/mock can generate the mocks in ports/mocks.
package ports

//go:generate mockgen -destination=mocks/mocks.go -package=mocks github.com/acpdrive/acpdrive/ports Launcher,Plan,Discarder,Process,Clock,MeasurementSource,Measurement,RuntimeRecognizer,MCPSource,Observer,SessionObserver,SessionObservation,ToolServerBeacon,ArmedBeacon,PermissionPolicy,AnswerPolicy,ResultServer,ArmedResult,RetryJournal,Resumed
