// Package fakes holds fake model servers for the interop suite: small HTTP
// servers on 127.0.0.1 that speak just enough of a vendor's model API
// (Gemini streamGenerateContent, the Anthropic Messages stream, the OpenAI
// Responses stream) for a real coding-agent runtime to run a turn against
// them without the internet.
//
// A test scripts the replies the runtime's model calls get, in order: plain
// text in chunks, a tool (function) call, usage figures, or an HTTP error.
// Calls beyond the script get the fallback reply. Every request is
// recorded, so a test can assert what the runtime sent.
package fakes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Reply is one scripted answer to a model call.
type Reply struct {
	// Text is streamed as successive text chunks, in order.
	Text []string
	// Tool, when set, is a tool (function) call the model makes after the
	// text.
	Tool *ToolCall
	// Usage is reported at the end of the stream.
	Usage Usage
	// Status, when not zero, makes the call fail with this HTTP status and
	// an error body in the vendor's format carrying ErrorMessage.
	Status int
	// ErrorMessage is the error text of a failed call.
	ErrorMessage string
	// ErrorBody, when set, is the whole body of a failed call, sent as
	// JSON instead of the vendor's format around ErrorMessage (a
	// provider's own error shape: an error code, a billing error).
	ErrorBody json.RawMessage
	// Header is added to the response's headers (retry-after,
	// retry-after-ms on a failed call).
	Header http.Header
	// Hold, when set, stops the stream after its first text chunk until
	// Hold is closed or the client goes away (the Chat Completions,
	// Anthropic and OpenAI Responses fakes): a model call still running,
	// for cancelling mid-turn.
	Hold <-chan struct{}
}

// held waits, when the reply is held, until the hold is released (true)
// or the client went away (false); an unheld reply goes on at once.
func held(r *http.Request, reply Reply) bool {
	if reply.Hold == nil {
		return true
	}
	select {
	case <-reply.Hold:
		return true
	case <-r.Context().Done():
		return false
	}
}

// ToolCall is a tool call the model makes.
type ToolCall struct {
	// ID identifies the call where the wire format carries an id.
	ID string
	// Name is the tool's name as the runtime declared it.
	Name string
	// Namespace, when set, is the namespace the runtime declared the tool
	// in (the OpenAI Responses fake's function_call carries it; codex
	// declares each MCP server's tools in a namespace of their own).
	Namespace string
	// Args are the call's arguments.
	Args map[string]any
}

// Usage are the token figures a reply reports.
type Usage struct {
	Input, Output, Cached, Thoughts int
}

// Total is Input + Output + Thoughts.
func (u Usage) Total() int { return u.Input + u.Output + u.Thoughts }

// TextReply is a reply made of text chunks with usage figures.
func TextReply(usage Usage, chunks ...string) Reply {
	return Reply{Text: chunks, Usage: usage}
}

// Request is one HTTP request the server received.
type Request struct {
	Method string
	// Path is the URL path, without the query.
	Path string
	// Query is the raw query string.
	Query  string
	Header http.Header
	Body   []byte
	// Scripted reports whether the request was a model call that took the
	// next scripted reply (or the fallback once the script ran out).
	Scripted bool
	// Index is the position of the reply it took among the scripted calls,
	// from 0; -1 for a request that was not a scripted call.
	Index int
}

// JSON decodes the body into a generic value (nil when it is not JSON).
func (r Request) JSON() map[string]any {
	var v map[string]any
	if json.Unmarshal(r.Body, &v) != nil {
		return nil
	}
	return v
}

// BodyContains reports whether the body holds s.
func (r Request) BodyContains(s string) bool { return bytes.Contains(r.Body, []byte(s)) }

// dialect is what differs between the vendors' APIs.
type dialect interface {
	// classify decides how a request is answered: as a scripted model
	// call, through other (a fixed answer of the dialect), or 404.
	classify(r *http.Request, body []byte) route
	// stream writes a scripted reply as the vendor's stream.
	stream(w http.ResponseWriter, r *http.Request, body []byte, reply Reply, n int)
	// fail writes an HTTP error in the vendor's format.
	fail(w http.ResponseWriter, status int, message string)
	// other answers a request that is not a scripted model call.
	other(w http.ResponseWriter, r *http.Request, body []byte)
}

type route int

const (
	routeNotFound route = iota
	routeScripted
	routeOther
)

// Server is a fake model server of one dialect.
type Server struct {
	srv     *httptest.Server
	dialect dialect
	name    string

	mu       sync.Mutex
	script   []Reply
	next     int
	fallback Reply
	asides   []aside
	requests []Request
}

// aside answers the model calls whose body holds marker with reply,
// outside the script.
type aside struct {
	marker []byte
	reply  Reply
}

func newServer(name string, d dialect) *Server {
	s := &Server{
		dialect:  d,
		name:     name,
		fallback: TextReply(Usage{Input: 1, Output: 1}, "(the fake "+name+" server has no more scripted replies)"),
	}
	// httptest listens on 127.0.0.1 on a port of its own.
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's base URL, http://127.0.0.1:<port>.
func (s *Server) URL() string { return s.srv.URL }

// Close shuts the server down. Streams still open are closed.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Script appends replies to the queue that model calls consume in order.
func (s *Server) Script(replies ...Reply) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
	return s
}

// Aside answers every model call whose body contains marker with reply,
// without taking a scripted reply: a runtime's side calls (a session title,
// a summary) whose number and order are its own. Such a call is recorded
// with Scripted false and Index -1.
func (s *Server) Aside(marker string, reply Reply) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asides = append(s.asides, aside{marker: []byte(marker), reply: reply})
	return s
}

// SetFallback sets the reply of the model calls made after the script ran
// out.
func (s *Server) SetFallback(r Reply) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = r
	return s
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ModelCalls returns the requests that were scripted model calls.
func (s *Server) ModelCalls() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Scripted {
			out = append(out, r)
		}
	}
	return out
}

// Unscripted reports how many model calls got the fallback reply.
func (s *Server) Unscripted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next <= len(s.script) {
		return 0
	}
	return s.next - len(s.script)
}

// Describe renders the recorded requests, one per line, for failure
// messages.
func (s *Server) Describe() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "%s %s", r.Method, r.Path)
		if r.Query != "" {
			fmt.Fprintf(&b, "?%s", r.Query)
		}
		if r.Scripted {
			fmt.Fprintf(&b, " [reply %d]", r.Index)
		}
		body := string(r.Body)
		if len(body) > 300 {
			body = body[:300] + "…"
		}
		fmt.Fprintf(&b, " %s\n", body)
	}
	return b.String()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   body,
		Index:  -1,
	}
	rt := s.dialect.classify(r, body)
	var reply Reply
	n := -1
	s.mu.Lock()
	side := false
	if rt == routeScripted {
		for _, a := range s.asides {
			if bytes.Contains(body, a.marker) {
				reply, side = a.reply, true
				break
			}
		}
	}
	if rt == routeScripted && !side {
		n = s.next
		s.next++
		reply = s.fallback
		if n < len(s.script) {
			reply = s.script[n]
		}
		rec.Scripted, rec.Index = true, n
	}
	s.requests = append(s.requests, rec)
	s.mu.Unlock()

	switch rt {
	case routeScripted:
		for k, v := range reply.Header {
			w.Header()[k] = v
		}
		if reply.Status != 0 && reply.ErrorBody != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(reply.Status)
			_, _ = w.Write(reply.ErrorBody)
			return
		}
		if reply.Status != 0 {
			s.dialect.fail(w, reply.Status, reply.ErrorMessage)
			return
		}
		s.dialect.stream(w, r, body, reply, n)
	case routeOther:
		s.dialect.other(w, r, body)
	default:
		s.dialect.fail(w, http.StatusNotFound, "the fake "+s.name+" server does not serve "+r.Method+" "+r.URL.Path)
	}
}

// sse writes server-sent events and flushes after each one.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; an empty name writes a data-only event.
func (e *sse) event(name string, data any) {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err) // every payload here is built from plain values
	}
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", raw)
	if e.f != nil {
		e.f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// obj is a JSON object under construction.
type obj = map[string]any

// done ends an OpenAI-style stream with its "data: [DONE]" sentinel.
func (e *sse) done() {
	fmt.Fprint(e.w, "data: [DONE]\n\n")
	if e.f != nil {
		e.f.Flush()
	}
}
