// Package jsonrpc is a JSON-RPC 2.0 connection over a newline-delimited byte
// stream: the stdio transport of the Agent Client Protocol, seen from the
// client that spawned the agent.
//
// A [Conn] owns exactly one read goroutine. That goroutine reads one line at a
// time with an explicit per-line byte bound ([Options.MaxLineBytes]) and
// classifies each line by its envelope:
//
//   - "method" and "id": an inbound request, given to [Handler.HandleRequest];
//   - "method" without "id": a notification, given to [Handler.HandleNotification];
//   - "id" without "method": a response, delivered to the waiting [Conn.Call];
//   - anything else: given to [Handler.HandleMalformed].
//
// Handlers run synchronously on the read goroutine, in wire order. There is no
// queue between the stream and the handler: a slow handler slows the reader
// down, the pipe fills, and the peer blocks on its writes (backpressure). No
// notification is ever dropped and a burst never ends the connection. Because
// a response is processed on the same goroutine, every line read before a
// response has been handled by the time the matching Call returns.
//
// A line longer than the bound is discarded through its newline without being
// buffered whole, reported to [Handler.HandleOversize], and reading goes on.
//
// Writes (requests, notifications, replies) are serialized; each message is
// one line terminated by '\n'. Outgoing request ids are integers starting at
// 0; inbound request ids ([ID]) are preserved exactly, so a reply echoes the
// id in the form the peer sent it (the string "0" stays a string).
package jsonrpc
