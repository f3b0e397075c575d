// Package netserve serves a stdio runtime at a network address
// (docs/behaviour.md#network), the library of acpdrive serve: every
// connection gets a runtime process of its own, started through the
// ports.Launcher it is given (the local one, so the runtime is contained as
// any runtime acpdrive starts), and every message is forwarded both ways
// unchanged. Nothing is decided here: the runtime's permission requests
// and questions reach the client, whose policy answers them.
//
// Addresses: tcp://HOST:PORT and unix:PATH carry newline-delimited
// JSON-RPC, as over stdio; http://HOST:PORT answers a WebSocket at /acp
// (one message per text frame), where a client dials ws://HOST:PORT/acp.
// Streamable HTTP is not served (a POST to /acp is answered 501).
//
// A listen address that is not loopback needs a token; a unix socket is
// made for its owner only (mode 0600) and a peer of another user is
// refused where the platform tells (Linux).
package netserve
