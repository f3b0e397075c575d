// Package netdial is a ports.Launcher that reaches a runtime already
// listening at a URL instead of starting a process
// (docs/behaviour.md#network): tcp://HOST:PORT and unix:PATH carry
// newline-delimited JSON-RPC as over stdio; ws:// and wss:// carry one
// JSON-RPC message per WebSocket text frame; http:// and https:// speak
// Streamable HTTP: every message POSTed, the connection id of the
// initialize answer (Acp-Connection-Id) on every later request, the
// server's messages on an event stream (GET) reopened with Last-Event-ID
// when it drops, and DELETE at the end.
//
// Where the server offers the durable transport
// (capabilities.transport.resumable in its initialize answer,
// docs/behaviour.md#network-resume), a dropped WebSocket is resumed: a new
// upgrade naming the connection sends stream/resume with the last cursor
// (_meta["acp/cursor"]) received, and what was missed comes again, once.
// The cursor is taken out of every message before it is read.
//
// The connection stands in for the process: its standard input is the
// link's sending side, its standard output the receiving side, and the
// "process" ends when the link ends. A runtime at a URL is remote
// (ports.Target.Remote): the application delivers it no MCP servers, arms
// no measurement source and never restarts it. The launch request's
// command is not run; the workspace is sent to the runtime as given (a
// path on the serving machine) and not checked here.
//
// The bearer token is read from the environment variable the operator
// names (Options.TokenEnv) when the connection is made, and is never
// logged: on WebSocket and HTTP it is the Authorization header; on a byte stream,
// the first request (_acpdrive/token), which acpdrive serve answers
// before anything else.
package netdial
