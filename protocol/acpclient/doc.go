// Package acpclient is the typed ACP v1 client acpdrive speaks over a
// protocol/jsonrpc connection: one method per call it makes (initialize,
// session/new, session/load, session/resume, session/prompt,
// session/cancel, session/close, session/delete, and the vendor-namespaced
// negative control), each taking a context that bounds the write and the
// wait, and the replies to the runtime's own requests.
//
// Every error a call returns is either a *CallError (the runtime answered
// with a JSON-RPC error; its Error text is the operator's message, built
// in one place, OperatorMessage) or the connection's own error (closed,
// write failed, ambiguous response) or the context's.
package acpclient
