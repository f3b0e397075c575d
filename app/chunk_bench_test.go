package app

import (
	"log/slog"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
	"github.com/acpdrive/acpdrive/protocol/dialect"
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

// reshapedMessage is a v2 agent_message: the kind v2 reshaped (a full
// content array where v1 streams chunks).
var reshapedMessage = []byte(`{"sessionId":"s-1","update":{"sessionUpdate":"agent_message","messageId":"m-1","content":[{"type":"text","text":"hello world "}]}}`)

// BenchmarkSessionReshapedMessage feeds one v2 agent_message at a time to
// a v2 session's event stream, through the session's own sink, with no
// process: the per-update cost of a kind v2 reshaped, decoded straight
// into the neutral model.
func BenchmarkSessionReshapedMessage(b *testing.B) {
	opts := Options{Clock: fakeclock.New(streamEpoch), Logger: slog.New(slog.DiscardHandler), OnEvent: func(domain.Event) {}}
	s := newSession(newConnection(opts, false), opts, nil)
	d, ok := dialect.For(2)
	if !ok {
		b.Fatal("no dialect of version 2")
	}
	s.settle(d)
	s.adopt("s-1")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.stream.update(reshapedMessage)
	}
}

// BenchmarkSessionChunkOnV2 is BenchmarkSessionChunk on a v2 session: the
// chunks v2 keeps from v1 take the same path.
func BenchmarkSessionChunkOnV2(b *testing.B) {
	opts := Options{Clock: fakeclock.New(streamEpoch), Logger: slog.New(slog.DiscardHandler), OnEvent: func(domain.Event) {}}
	s := newSession(newConnection(opts, false), opts, nil)
	d, ok := dialect.For(2)
	if !ok {
		b.Fatal("no dialect of version 2")
	}
	s.settle(d)
	s.adopt("s-1")
	params := []byte(`{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"hello world "}}}`)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s.stream.update(params)
	}
}
