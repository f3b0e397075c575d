package app

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

// TestMessageNeverPrecedesItsLastChunk: a flush that runs on another
// goroutine (a turn's end, the stream's end between turns) while the
// reader handles a message's last chunk never emits the whole message
// before that chunk's message_chunk event (docs/behaviour.md#messages).
//
// The schedule is forced, not hoped for: the flushing goroutine holds the
// sink (an event of its own in a slow consumer) while the reader takes the
// last chunk, then flushes as soon as the sink is free. Before the fix the
// chunk went into the accumulator before the reader waited for the sink,
// so the flush could take the whole message and emit it first.
func TestMessageNeverPrecedesItsLastChunk(t *testing.T) {
	t.Parallel()
	for i := 0; i < 50; i++ {
		var mu sync.Mutex
		var events []domain.Event
		gate, entered := make(chan struct{}), make(chan struct{})
		s := newEventStream(fakeclock.New(streamEpoch), slog.New(slog.NewTextHandler(io.Discard, nil)), func(ev domain.Event) {
			if ev.Type == domain.EventOtherMessage {
				close(entered)
				<-gate // a slow consumer holds the sink
			}
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}, nil, func() int { return 1 })
		s.adopt("s-1")
		s.text("m-1", "first ", streamEpoch)

		flushed := make(chan struct{})
		go func() {
			defer close(flushed)
			s.emit(domain.Event{Type: domain.EventOtherMessage, Message: domain.MsgPlanUpdate})
			s.flush() // the turn's end
		}()
		<-entered
		read := make(chan struct{})
		go func() {
			defer close(read)
			s.text("m-1", "last", streamEpoch) // the reader, on the message's last chunk
		}()
		time.Sleep(time.Millisecond) // lets the reader reach the sink; nothing is timed
		close(gate)
		<-flushed
		<-read
		s.flush()

		mu.Lock()
		got := eventsShape(events)
		mu.Unlock()
		last := -1
		for j, ev := range got {
			if ev == "message_chunk:last" {
				last = j
			}
		}
		require.NotEqual(t, -1, last, "%q", got)
		for j, ev := range got[:last] {
			require.NotContains(t, []string{"notification:first last", "notification:last"}, ev,
				"run %d: the message was emitted (at %d) before its last chunk (at %d): %q", i, j, last, got)
		}
	}
}

func eventsShape(evs []domain.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = string(ev.Type) + ":" + ev.Message
	}
	return out
}
