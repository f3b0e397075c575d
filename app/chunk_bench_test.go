package app

import (
	"log/slog"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

// BenchmarkSessionChunk feeds one agent_message_chunk notification at a
// time to a session's event stream, through the session's own sink, with
// no process: the per-chunk cost of the client's side of a stream.
func BenchmarkSessionChunk(b *testing.B) {
	opts := Options{Clock: fakeclock.New(streamEpoch), Logger: slog.New(slog.DiscardHandler), OnEvent: func(domain.Event) {}}
	s := newSession(newConnection(opts, false), opts, nil)
	s.adopt("s-1")
	params := []byte(`{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"hello world "}}}`)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.stream.update(params)
	}
}
