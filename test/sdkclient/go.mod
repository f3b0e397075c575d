module github.com/acpdrive/acpdrive/test/sdkclient

go 1.26.0

replace github.com/acpdrive/acpdrive => ../..

require (
	github.com/acpdrive/acpdrive v0.0.0-00010101000000-000000000000
	github.com/coder/acp-go-sdk v0.13.5
	github.com/stretchr/testify v1.12.1
)

require (
	go.uber.org/goleak v1.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
