package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// handlerCost selects the per-notification work both clients' handlers do.
type handlerCost int

const (
	// costTrivial: count the notification (one atomic add).
	costTrivial handlerCost = iota
	// costBusy: about 1µs of CPU work, then a mutex-guarded append of the
	// chunk text, then the count: what a handler that keeps a transcript
	// might cost.
	costBusy
)

func (c handlerCost) String() string {
	if c == costBusy {
		return "busy-1us"
	}
	return "trivial"
}

// sink is the handler body shared by both clients, so that each side does
// exactly the same work per notification.
type sink struct {
	cost  handlerCost
	n     atomic.Int64
	first atomic.Int64 // when the first chunk was handled, in ns since clockBase (0: none yet)

	mu    sync.Mutex
	texts []string
}

func newSink(cost handlerCost) *sink { return &sink{cost: cost} }

// chunk handles one agent_message_chunk.
func (s *sink) chunk(text string) {
	if s.cost == costBusy {
		spin(time.Microsecond)
		s.mu.Lock()
		s.texts = append(s.texts, text)
		s.mu.Unlock()
	}
	if s.first.Load() == 0 {
		s.first.CompareAndSwap(0, int64(time.Since(clockBase)))
	}
	s.n.Add(1)
}

func (s *sink) received() int64 { return s.n.Load() }

// firstAt is when the first chunk was handled (zero time when none was).
func (s *sink) firstAt() time.Time {
	ns := s.first.Load()
	if ns == 0 {
		return time.Time{}
	}
	return clockBase.Add(time.Duration(ns))
}

// clockBase anchors the sink's monotonic timestamps.
var clockBase = time.Now()

// spin burns CPU for about d.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// turnReport is what one client saw of one `#burst N` turn.
type turnReport struct {
	// outcome: acpdrive's turn outcome event type, or the SDK's stop
	// reason; "error" when the turn did not end through a response.
	outcome string
	// err is the turn's error, if any (acpdrive: the turn result's error;
	// SDK: Prompt's error).
	err error
	// disconnected: the client's connection ended before the turn's
	// response was handled.
	disconnected bool
	// elapsed runs from just before the prompt was sent to the moment the
	// last notification was handled and the turn was over.
	elapsed time.Duration
	// sent and end delimit elapsed.
	sent, end time.Time
}

// burstClient is one client of one fresh reference-agent process that has
// already initialized and created its session.
type burstClient interface {
	// turn runs one prompt to its end.
	turn(ctx context.Context, prompt string) turnReport
	// stop tears the process down (process group included) and waits for
	// every goroutine of the client.
	stop(ctx context.Context) error
	// pid is the agent process's ID (and its process group's).
	pid() int
}

// starter launches a fresh agent, initializes it and creates a session,
// with every notification handled by s.
type starter func(ctx context.Context, s *sink) (burstClient, error)

// burstPrompt is the reference agent's prompt for an n-chunk burst.
func burstPrompt(n int) string { return "#burst " + strconv.Itoa(n) }

// agentCommand is the reference agent's command line.
func agentCommand() []string { return []string{agentBin, "agent"} }

// burstResult is one whole run: start, turn, stop.
type burstResult struct {
	expected, received int64
	first              time.Time // when the first chunk was handled
	turnReport
	survivors []int // live members of the agent's process group after stop
	stopErr   error
	wall      time.Duration // start to stop, both included
}

func (r burstResult) lost() int64 { return r.expected - r.received }

func (r burstResult) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.received) / r.elapsed.Seconds()
}

// streamRate is the rate while the stream flowed: from the first chunk
// handled to the end, leaving out the prompt's round trip and the agent's
// start of the turn.
func (r burstResult) streamRate() float64 {
	w := streamWindow(r.first, r.end)
	if w <= 0 || r.received < 2 {
		return 0
	}
	return float64(r.received-1) / w.Seconds()
}

// streamWindow is the time from the first chunk handled to end.
func streamWindow(first, end time.Time) time.Duration {
	if first.IsZero() {
		return 0
	}
	return end.Sub(first)
}

// runBurst runs one n-notification burst on a fresh agent from start to
// stop.
func runBurst(ctx context.Context, start starter, n int, cost handlerCost) (burstResult, error) {
	t0 := time.Now()
	s := newSink(cost)
	c, err := start(ctx, s)
	if err != nil {
		return burstResult{}, err
	}
	rep := c.turn(ctx, burstPrompt(n))
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	stopErr := c.stop(stopCtx)
	return burstResult{
		expected:   int64(n),
		received:   s.received(),
		first:      s.firstAt(),
		turnReport: rep,
		survivors:  groupMembers(c.pid()),
		stopErr:    stopErr,
		wall:       time.Since(t0),
	}, nil
}

// groupMembers lists the live (non-zombie) processes of process group
// pgid, read from /proc.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var members []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone while we looked
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and
		// parentheses, so read after its last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 || len(f[0]) != 1 {
			continue
		}
		if state := f[0][0]; state == 'Z' || state == 'X' {
			continue
		}
		if pg, err := strconv.Atoi(string(f[2])); err == nil && pg == pgid {
			members = append(members, pid)
		}
	}
	return members
}

// errString renders an error for a log line.
func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

// summary is one line describing a run.
func (r burstResult) summary() string {
	return fmt.Sprintf("received %d of %d (lost %d) in %v (%.0f notifs/s; %.0f while streaming), outcome %q, disconnected %v, error: %s, wall %v",
		r.received, r.expected, r.lost(), r.elapsed.Round(time.Millisecond), r.rate(), r.streamRate(), r.outcome,
		r.disconnected, errString(r.err), r.wall.Round(time.Millisecond))
}

var errNoSession = errors.New("no session id")
