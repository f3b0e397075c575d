package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Error codes defined by JSON-RPC 2.0 and by the Agent Client Protocol.
// Any other integer code may appear on the wire and must be accepted.
const (
	// CodeParseError means the receiver got invalid JSON.
	CodeParseError = -32700
	// CodeInvalidRequest means the JSON sent is not a valid request object.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound means the method does not exist or is not available.
	CodeMethodNotFound = -32601
	// CodeInvalidParams means the method parameters are invalid.
	CodeInvalidParams = -32602
	// CodeInternalError is an implementation-defined internal error.
	CodeInternalError = -32603
	// CodeRequestCancelled means the request was aborted (ACP: $/cancel_request,
	// shutdown, resource limits).
	CodeRequestCancelled = -32800
	// CodeAuthRequired means the agent requires authentication first (ACP
	// auth_required).
	CodeAuthRequired = -32000
)

// ErrClosed reports that the connection has ended (its read side reached EOF
// or failed) or that [Conn.Close] was called. Errors returned for that reason
// wrap ErrClosed; when the read side ended they also wrap the reason, which
// [Conn.Err] returns as well.
var ErrClosed = errors.New("jsonrpc: connection closed")

// ErrWriteFailed reports that writing a message to the peer failed. Errors
// returned for that reason wrap both ErrWriteFailed and the cause: the
// writer's error, io.ErrShortWrite, or the context error of a write whose
// context ended while it was in progress (context.DeadlineExceeded also when
// the writer itself enforced the deadline, which then adds
// os.ErrDeadlineExceeded). A write failure is sticky: the stream may hold a
// partial line, so every later write fails at once with the same error (see
// Conn.Broken and Conn.WriteErr). A write whose context ended before it
// started is not a write failure.
var ErrWriteFailed = errors.New("jsonrpc: write failed")

// ErrAmbiguousResponse reports a response that carried both a non-null
// "result" and a non-null "error", so that whether the call succeeded is
// unknown. The waiting Call fails with an error wrapping it; when no call
// waits for the id, the line goes to Handler.HandleMalformed instead.
var ErrAmbiguousResponse = errors.New("jsonrpc: response carried both result and error")

// Error is a JSON-RPC error object. It is returned by [Conn.Call] when the peer
// answers with an error response, and sent by [Conn.ReplyError].
type Error struct {
	// Code is the error code, for example [CodeMethodNotFound].
	Code int64 `json:"code"`
	// Message is a short description of the error.
	Message string `json:"message"`
	// Data is optional additional information; nil when absent.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error returns "jsonrpc error <code>: <message>".
func (e *Error) Error() string {
	return "jsonrpc error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

// ErrPending is returned by Pending.Result before the response arrived.
var ErrPending = errors.New("jsonrpc: response not received yet")
