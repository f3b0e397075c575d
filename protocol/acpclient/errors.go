package acpclient

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// MaxDataRunes bounds the rendering of a JSON-RPC error's data in an
// operator's message (docs/behaviour.md#errors).
const MaxDataRunes = 500

// CallError is the runtime's JSON-RPC error answer to one call.
type CallError struct {
	// Method is the method that was called.
	Method string
	// RPC is the error object as the runtime sent it.
	RPC *jsonrpc.Error
}

// Error is the operator's message, OperatorMessage.
func (e *CallError) Error() string { return OperatorMessage(e.Method, e.RPC) }

// Unwrap returns the JSON-RPC error, so errors.As finds it.
func (e *CallError) Unwrap() error { return e.RPC }

// Code is the JSON-RPC error code.
func (e *CallError) Code() int64 { return e.RPC.Code }

// DecodeError is a result that did not decode into the method's shape.
type DecodeError struct {
	// Method is the method whose result did not decode.
	Method string
	// Err is the decoder's error.
	Err error
}

// Error says which method's response did not decode.
func (e *DecodeError) Error() string { return e.Method + " response did not decode: " + e.Err.Error() }

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }

// OperatorMessage is the one place a JSON-RPC error becomes the text an
// operator reads: "<method> error <code>: <message>", followed by
// " (data: <data>)" when the error carried data. The data is rendered
// compactly (a JSON string as its text), control characters replaced by
// spaces, and cut to MaxDataRunes runes with "…" (codex-acp, for one, puts
// the upstream HTTP status and body there).
func OperatorMessage(method string, e *jsonrpc.Error) string {
	var b strings.Builder
	b.WriteString(method)
	b.WriteString(" error ")
	b.WriteString(strconv.FormatInt(e.Code, 10))
	b.WriteString(": ")
	b.WriteString(e.Message)
	if d := RenderData(e.Data, MaxDataRunes); d != "" {
		b.WriteString(" (data: ")
		b.WriteString(d)
		b.WriteString(")")
	}
	return b.String()
}

// RenderData renders a JSON-RPC error's data for a person: "" for absent
// or null data, a string's own text, any other value as compact JSON;
// control characters become spaces, runs of spaces collapse, and the
// result is cut to maxRunes runes (the last one "…").
func RenderData(data json.RawMessage, maxRunes int) string {
	if len(data) == 0 || string(data) == "null" {
		return ""
	}
	text := string(data)
	var str string
	if err := json.Unmarshal(data, &str); err == nil {
		text = str
	} else {
		var buf bytes.Buffer
		if json.Compact(&buf, data) == nil {
			text = buf.String()
		}
	}
	return cut(clean(text), maxRunes)
}

// clean replaces control characters and invalid UTF-8 by spaces and
// collapses runs of white space.
func clean(s string) string {
	var b strings.Builder
	space := false
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				r = ' '
			}
		}
		if r < 0x20 || r == 0x7f || r == ' ' {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), " ")
}

func cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}
