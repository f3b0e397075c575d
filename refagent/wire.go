package refagent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// JSON-RPC error codes the agent produces.
const (
	codeParseError      = -32700
	codeInvalidRequest  = -32600
	codeMethodNotFound  = -32601
	codeInvalidParams   = -32602
	codeInternalError   = -32603
	codeRequestCanceled = -32800
)

var nullID = json.RawMessage("null")

// inMsg is any JSON-RPC message read from stdin. A present "id":null
// decodes to the raw bytes "null", an absent id to nil.
type inMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// outMsg is any JSON-RPC message the agent writes; field order is the wire
// order (jsonrpc, id, method, params, result, error).
type outMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

type updateParams struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type chunkUpdate struct {
	SessionUpdate string    `json:"sessionUpdate"`
	MessageID     string    `json:"messageId,omitempty"`
	Content       textBlock `json:"content"`
}

type toolUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title,omitempty"`
	Kind          string          `json:"kind,omitempty"`
	Status        string          `json:"status,omitempty"`
	Content       json.RawMessage `json:"content,omitempty"`
	Locations     json.RawMessage `json:"locations,omitempty"`
	RawInput      json.RawMessage `json:"rawInput,omitempty"`
	RawOutput     json.RawMessage `json:"rawOutput,omitempty"`
}

type planUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Entries       json.RawMessage `json:"entries"`
}

type commandsUpdate struct {
	SessionUpdate     string          `json:"sessionUpdate"`
	AvailableCommands json.RawMessage `json:"availableCommands"`
}

type modeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

type configUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ConfigOptions json.RawMessage `json:"configOptions"`
}

type infoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Title         string `json:"title,omitempty"`
	UpdatedAt     string `json:"updatedAt,omitempty"`
}

type usageUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Used          uint64          `json:"used"`
	Size          uint64          `json:"size"`
	Cost          json.RawMessage `json:"cost,omitempty"`
}

type initResult struct {
	ProtocolVersion   int             `json:"protocolVersion"`
	AgentCapabilities json.RawMessage `json:"agentCapabilities"`
	AgentInfo         json.RawMessage `json:"agentInfo,omitempty"`
	AuthMethods       json.RawMessage `json:"authMethods"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

type newSessionResult struct {
	SessionID string `json:"sessionId"`
}

type promptResult struct {
	StopReason string          `json:"stopReason"`
	Usage      json.RawMessage `json:"usage,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

type permissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  json.RawMessage    `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

type permissionToolCall struct {
	ToolCallID string `json:"toolCallId"`
	Title      string `json:"title"`
	Kind       string `json:"kind,omitempty"`
}

type elicitationParams struct {
	SessionID       string          `json:"sessionId"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
}

type cancelRequestParams struct {
	RequestID json.RawMessage `json:"requestId"`
}

var emptyObject = json.RawMessage("{}")

// encodeLine renders v as one JSON line ending in '\n', without HTML escaping.
func encodeLine(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var errClosed = errors.New("refagent: output closed")

// lineWriter serializes whole-line writes to stdout. After close (an exit)
// or after a failed write every write fails with errClosed.
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closed bool
}

func (lw *lineWriter) write(b []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.closed {
		return errClosed
	}
	if _, err := lw.w.Write(b); err != nil {
		lw.closed = true
		return errClosed
	}
	return nil
}

func (lw *lineWriter) close() {
	lw.mu.Lock()
	lw.closed = true
	lw.mu.Unlock()
}

// syncWriter serializes writes to stderr.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (sw *syncWriter) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.w.Write(p)
}

// LogRecord is one line of the --log file. The agent appends one record per
// message it receives (requests, notifications, answers to its own requests,
// lines that are not JSON-RPC) and per process event (stdin end, signal).
type LogRecord struct {
	// Time is when the agent read the line (RFC 3339, UTC).
	Time string `json:"time"`
	// Kind is request, notification, response, invalid, eof or signal.
	Kind string `json:"kind"`
	// Method is the method of a request or notification.
	Method string `json:"method,omitempty"`
	// ID is the id of a request or response, as received.
	ID json.RawMessage `json:"id,omitempty"`
	// Answers is, for a response, the method of the agent's own request it
	// answers (e.g. "session/request_permission"); empty when the id matches
	// no request the agent sent.
	Answers string `json:"answers,omitempty"`
	// Message is the received message, verbatim (compacted JSON).
	Message json.RawMessage `json:"message,omitempty"`
	// Raw is a received line that is not a JSON-RPC message, as text.
	Raw string `json:"raw,omitempty"`
	// Signal names the signal of a signal record.
	Signal string `json:"signal,omitempty"`
}

// eventLog appends LogRecords to the --log file; a nil *eventLog logs nothing.
type eventLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *eventLog) add(r LogRecord) {
	if l == nil {
		return
	}
	r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := encodeLine(r)
	if err != nil {
		// Message is only ever set from bytes json.Valid accepted.
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(line)
}
