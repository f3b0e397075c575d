// Package jsonrpc is a JSON-RPC 2.0 connection over a newline-delimited byte
// stream: the stdio transport of the Agent Client Protocol, seen from the
// client that spawned the agent.
//
// A [Conn] owns one read goroutine and one writer goroutine. The read
// goroutine reads one line at a time with an explicit per-line byte bound
// ([Options.MaxLineBytes]) and classifies each line by its envelope:
//
//   - "method" and "id": an inbound request, given to [Handler.HandleRequest];
//   - "method" without "id": a notification, given to [Handler.HandleNotification];
//   - "id" without "method": a response, delivered to the waiting [Conn.Call]
//     (one with both a result and an error fails it with
//     [ErrAmbiguousResponse]);
//   - anything else: given to [Handler.HandleMalformed].
//
// Handlers run synchronously on the read goroutine, in wire order. There is no
// queue between the stream and the handler: a slow handler slows the reader
// down, the pipe fills, and the peer blocks on its writes (backpressure). No
// notification is ever dropped and a burst never ends the connection. Because
// a response is processed on the same goroutine, every line read before a
// response has been handled by the time the matching Call returns.
//
// A line longer than the bound is reported to [Handler.HandleOversize] as soon
// as it has passed the bound, even if its newline never comes; the rest of it
// is discarded as it arrives, without being buffered, and reading goes on
// after its newline.
//
// Writes (requests, notifications, replies) are serialized through the writer
// goroutine; each message is one line terminated by '\n'. Every write takes
// a context and returns by its end, even when the peer has stopped reading
// and the writer has no write deadlines; a write cut short mid-line leaves
// the stream broken ([Conn.Broken], [Conn.WriteErr]). Outgoing request ids
// are integers starting at 0, and only a response carrying the id exactly as
// sent answers a call; inbound request ids ([ID]) may be null, a string or
// any JSON number and are preserved exactly, so a reply echoes the id in the
// form the peer sent it (the string "0" stays a string, 2.5 stays 2.5).
package jsonrpc
