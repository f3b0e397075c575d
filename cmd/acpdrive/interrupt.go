package main

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/app"
)

// stopMargin is how much longer than the stop grace the CLI gives Stop
// (docs/behaviour.md#bounds: stop_grace + 10 s), whichever path stops.
const stopMargin = 10 * time.Second

// interrupter turns SIGINT/SIGTERM into turn cancellation: the first signal
// cancels the running turn (and no further turn starts), a second one stops
// the session within stopBound; the teardown still runs in its fixed order.
type interrupter struct {
	sess      *app.Session // guarded by mu
	stopBound time.Duration
	// notify tells a person at once what a signal does (count: 1 for
	// the first, 2 for the second); nil tells nothing.
	notify func(count int)

	mu       sync.Mutex
	cancel   context.CancelFunc
	count    int
	stopping bool

	done chan struct{}
	wg   sync.WaitGroup
}

func newInterrupter(sigs <-chan os.Signal, sess *app.Session, stopBound time.Duration, notify func(count int)) *interrupter {
	in := &interrupter{sess: sess, stopBound: stopBound, notify: notify, done: make(chan struct{})}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		for {
			select {
			case <-in.done:
				return
			case <-sigs:
				in.signal()
			}
		}
	}()
	return in
}

func (in *interrupter) signal() {
	in.mu.Lock()
	in.count++
	in.stopping = true
	cancel, count := in.cancel, in.count
	in.mu.Unlock()
	if in.notify != nil && count <= 2 {
		in.notify(count)
	}
	if cancel != nil {
		cancel()
	}
	if count >= 2 {
		ctx, stop := context.WithTimeout(context.Background(), in.stopBound)
		defer stop()
		_ = in.session().Stop(ctx)
	}
}

func (in *interrupter) session() *app.Session {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.sess
}

func (in *interrupter) turnContext(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	in.mu.Lock()
	in.cancel = cancel
	in.mu.Unlock()
	return ctx
}

func (in *interrupter) turnDone() {
	in.mu.Lock()
	if in.cancel != nil {
		in.cancel()
		in.cancel = nil
	}
	in.mu.Unlock()
}

func (in *interrupter) stopped() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.stopping
}

func (in *interrupter) close() {
	close(in.done)
	in.wg.Wait()
}
