package netserve

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// BenchmarkJournalAdd measures a message through the journal to a live
// follower, with and without the journal on disk.
func BenchmarkJournalAdd(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 100) + `"}}}}`)
	for _, disk := range []bool{false, true} {
		name := "memory"
		if disk {
			name = "disk"
		}
		b.Run(name, func(b *testing.B) {
			o := Options{Retention: DefaultRetention, Logger: slog.New(slog.DiscardHandler)}
			if disk {
				o.JournalDir, o.JournalBytes = b.TempDir(), DefaultJournalBytes
			}
			j := newJournal(o)
			defer j.close()
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				j.follow(context.Background(), 0, func(int64, []byte) error { return nil }, func() error { return nil })
			}()
			b.SetBytes(int64(len(msg)))
			b.ResetTimer()
			for i := range b.N {
				if err := j.add(msg); err != nil {
					b.Fatal(err)
				}
				if i%64 == 63 {
					j.publish()
				}
			}
			j.end()
			wg.Wait()
		})
	}
}
