// Package netserve serves a stdio runtime at a network address
// (docs/behaviour.md#network), the library of acpdrive serve: every
// connection gets a runtime process of its own, started through the
// ports.Launcher it is given (the local one, so the runtime is contained as
// any runtime acpdrive starts), and every message is forwarded both ways
// unchanged. Nothing is decided here: the runtime's permission requests
// and questions reach the client, whose policy answers them.
//
// Addresses: tcp://HOST:PORT and unix:PATH carry newline-delimited
// JSON-RPC, as over stdio; http://HOST:PORT answers at /acp both a
// WebSocket (one message per text frame; a client dials
// ws://HOST:PORT/acp) and Streamable HTTP (a client dials
// http://HOST:PORT/acp): POST per message, the connection id on the
// initialize answer, the other messages on the connection's event stream,
// numbered and kept for a stream that reopens with Last-Event-ID.
//
// Both speak the durable transport (docs/behaviour.md#network-resume):
// every message the runtime writes carries its cursor (the SSE id: and
// _meta["acp/cursor"]); the initialize answer advertises
// capabilities.transport.resumable; a WebSocket connection outlives its
// socket for Options.AbandonAfter, and a socket naming it
// (Acp-Connection-Id) that sends stream/resume gets what was missed, or
// stream/resume_failed when it is no longer held.
//
// A listen address that is not loopback needs a token; a unix socket is
// made for its owner only (mode 0600) and a peer of another user is
// refused where the platform tells (Linux).
package netserve
