module github.com/acpdrive/acpdrive/bench

go 1.26.0

replace github.com/acpdrive/acpdrive => ../

require (
	github.com/acpdrive/acpdrive v0.0.0-00010101000000-000000000000
	github.com/coder/acp-go-sdk v0.13.5
	go.uber.org/goleak v1.3.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
