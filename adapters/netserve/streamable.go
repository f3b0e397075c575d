package netserve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
)

// DefaultAbandonAfter is how long a Streamable HTTP connection may go
// with no event stream open and no request before it counts as abandoned
// and its runtime is ended: a client that vanished without DELETE leaves
// nothing running.
const DefaultAbandonAfter = 2 * time.Minute

// DefaultRetention is how many of a connection's latest messages are
// held at least for a link that resumes after a cursor (up to twice as
// many are); it is also how far the runtime may run ahead of the client
// before its output waits.
const DefaultRetention = 4096

// errLinkClosed ends a Streamable HTTP link's reads.
var errLinkClosed = errors.New("the connection was closed")

// httpLink is one Streamable HTTP connection (docs/behaviour.md#network):
// the client POSTs each message, the initialize answer comes back on its
// POST with the connection id, and every other message of the runtime
// goes on the connection's event stream (GET), numbered, so a stream that
// reopens with Last-Event-ID receives what it missed. DELETE ends it.
type httpLink struct {
	id    string
	inbox chan []byte
	done  chan struct{}
	once  sync.Once

	initID     []byte      // the id of the initialize awaiting its answer
	initAnswer chan []byte // buffered 1

	j      *journal
	resume netwire.Retention // advertised in the initialize answer

	mu      sync.Mutex
	closed  bool
	keys    map[string]bool // the latest messages' idempotency keys
	order   []string        // those keys, oldest first (at most keysHeld)
	streams int             // event streams open
	idle    *time.Timer     // runs close once abandoned
	abandon time.Duration   // the bound idle is set to
}

func newHTTPLink(o Options) (*httpLink, error) {
	id, err := newID()
	if err != nil {
		return nil, err
	}
	l := &httpLink{id: id, inbox: make(chan []byte), done: make(chan struct{}),
		initAnswer: make(chan []byte, 1), abandon: o.AbandonAfter, j: newJournal(o), resume: o.retained()}
	l.idle = time.AfterFunc(o.AbandonAfter, l.close)
	return l, nil
}

// newID is a new connection id: 128 random bits in hex.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// keysHeld is how many of a connection's latest idempotency keys are
// remembered: a client sends a message again only just after a failed
// attempt.
const keysHeld = 64

// firstTime reports whether the message named key (HeaderIdempotencyKey;
// "" names none) is seen for the first time, and remembers it.
func (l *httpLink) firstTime(key string) bool {
	if key == "" {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.keys[key] {
		return false
	}
	if l.keys == nil {
		l.keys = map[string]bool{}
	}
	l.keys[key] = true
	l.order = append(l.order, key)
	if len(l.order) > keysHeld {
		delete(l.keys, l.order[0])
		l.order = l.order[1:]
	}
	return true
}

// touch restarts the abandonment bound unless a stream is open.
func (l *httpLink) touch() {
	l.mu.Lock()
	if l.streams == 0 {
		l.idle.Reset(l.abandon)
	}
	l.mu.Unlock()
}

func (l *httpLink) authenticate(*Server) ([]byte, bool) { return nil, true }

func (l *httpLink) read() ([]byte, error) {
	select {
	case m := <-l.inbox:
		return m, nil
	case <-l.done:
		return nil, errLinkClosed
	}
}

// write delivers the initialize answer to its POST (advertising the
// resume), and journals every other message for the streams.
func (l *httpLink) write(msg []byte) error {
	l.mu.Lock()
	if l.initID != nil && netwire.Answers(msg, l.initID) {
		l.initID = nil
		l.mu.Unlock()
		l.initAnswer <- netwire.AddResumable(bytes.Clone(msg), l.resume)
		return nil
	}
	l.mu.Unlock()
	return l.j.add(msg)
}

func (l *httpLink) flush() error { l.j.publish(); return nil }

func (l *httpLink) closeWrite() { l.j.end() }

func (l *httpLink) close() {
	l.once.Do(func() {
		l.idle.Stop()
		close(l.done)
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		l.j.close()
	})
}

// handleStreamable answers POST, GET (the event stream) and DELETE.
func (s *Server) handleStreamable(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(netwire.HeaderConnection)
	if r.Method == http.MethodPost && id == "" {
		s.initialize(ctx, w, r)
		return
	}
	s.mu.Lock()
	l := s.links[id]
	s.mu.Unlock()
	if l == nil {
		http.Error(w, "no such connection", http.StatusNotFound)
		return
	}
	l.touch()
	switch r.Method {
	case http.MethodPost:
		msg, err := io.ReadAll(io.LimitReader(r.Body, netwire.MaxMessageBytes+1))
		if err != nil || len(msg) > netwire.MaxMessageBytes || !json.Valid(msg) {
			http.Error(w, "the body is not one JSON-RPC message", http.StatusBadRequest)
			return
		}
		if !l.firstTime(r.Header.Get(netwire.HeaderIdempotencyKey)) {
			w.WriteHeader(http.StatusAccepted) // handed on already
			return
		}
		// A message received whole is handed on even when its client
		// has gone: an attempt sent again is answered as done.
		select {
		case l.inbox <- bytes.TrimSpace(msg):
			w.WriteHeader(http.StatusAccepted)
		case <-l.done:
			http.Error(w, "the connection has ended", http.StatusNotFound)
		}
	case http.MethodGet:
		if r.Header.Get(netwire.HeaderSession) != "" {
			// Every message is on the connection's stream, in the
			// runtime's order; a session's own stream is held open and
			// stays empty, for clients that open one per session.
			l.sessionStream(w, r)
			return
		}
		l.stream(w, r)
	case http.MethodDelete:
		l.close()
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "POST, GET or DELETE", http.StatusMethodNotAllowed)
	}
}

// initialize starts a connection with the initialize request r carries
// and answers it with the runtime's answer and the connection id.
func (s *Server) initialize(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	msg, err := io.ReadAll(io.LimitReader(r.Body, netwire.MaxMessageBytes+1))
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err != nil || json.Unmarshal(msg, &m) != nil || m.Method != "initialize" || len(m.ID) == 0 {
		http.Error(w, "a request without "+netwire.HeaderConnection+" must be initialize", http.StatusBadRequest)
		return
	}
	l, err := newHTTPLink(s.opts)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	l.initID = m.ID
	sv, ok := s.join(l)
	if !ok {
		http.Error(w, "the server is ending", http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	s.links[l.id] = l
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.links, l.id)
			s.mu.Unlock()
			s.leave(sv)
		}()
		sv.run(ctx)
	}()
	select {
	case l.inbox <- bytes.TrimSpace(msg):
	case <-l.done:
	}
	select {
	case answer := <-l.initAnswer:
		w.Header().Set(netwire.HeaderConnection, l.id)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	case <-l.done:
		http.Error(w, "the runtime ended before answering initialize", http.StatusBadGateway)
	case <-r.Context().Done():
		l.close()
	}
}

// opened counts an event stream open (no abandonment meanwhile); the
// function it returns counts it closed.
func (l *httpLink) opened() func() {
	l.mu.Lock()
	l.streams++
	l.idle.Stop()
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		if l.streams--; l.streams == 0 && !l.closed {
			l.idle.Reset(l.abandon)
		}
		l.mu.Unlock()
	}
}

// startEvents answers a GET with an event stream.
func startEvents(w http.ResponseWriter) http.Flusher {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if fl != nil {
		fl.Flush()
	}
	return fl
}

// sessionStream holds a session's event stream open, empty, until the
// connection ends or the client leaves.
func (l *httpLink) sessionStream(w http.ResponseWriter, r *http.Request) {
	defer l.opened()()
	startEvents(w)
	select {
	case <-l.done:
	case <-r.Context().Done():
	}
}

// stream writes the connection's events from the one after Last-Event-ID
// (else from the first not yet written to any stream) until the
// runtime's output ends or the link closes; 409 when that event is no
// longer held.
func (l *httpLink) stream(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get(netwire.HeaderLastEventID)
	from, ok := l.j.after(last)
	if !ok {
		http.Error(w, "the events after "+last+" are no longer held", http.StatusConflict)
		return
	}
	defer l.opened()()
	fl := startEvents(w)
	flush := func() error {
		if fl != nil {
			fl.Flush()
		}
		return nil
	}
	l.j.follow(r.Context(), from, func(seq int64, msg []byte) error { return netwire.WriteEvent(w, seq, msg) }, flush)
}
