package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// statusLine is the live status line shown on a terminal: elapsed time of
// the turn, the last message and the number of tool calls. It redraws
// itself every 200 ms until stopped.
type statusLine struct {
	w io.Writer

	mu      sync.Mutex
	began   time.Time
	last    string
	tools   int
	visible bool
	held    bool // the reply stream has a line open: do not draw over it
	// tool is the running tool's label, "" when none runs; toolBegan
	// is when it was announced.
	tool      string
	toolBegan time.Time

	done chan struct{}
	wg   sync.WaitGroup
}

func newStatusLine(w io.Writer) *statusLine {
	s := &statusLine{w: w, began: time.Now(), done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
				s.mu.Lock()
				s.draw()
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *statusLine) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.began, s.tools, s.last = time.Now(), 0, ""
}

func (s *statusLine) elapsed() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.began)
}

func (s *statusLine) update(last string, tools int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if last != "" {
		s.last = last
	}
	s.tools = tools
}

// running shows the running tool (label "" when none runs), at once
// when one starts.
func (s *statusLine) running(label string, began time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tool, s.toolBegan = label, began
	if label != "" {
		s.draw()
	}
}

func (s *statusLine) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.visible {
		fmt.Fprint(s.w, "\r\033[K")
		s.visible = false
	}
}

// hold stops (or resumes) drawing while the streamed reply has a line open.
func (s *statusLine) hold(h bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = h
}

func (s *statusLine) draw() {
	if s.held {
		return
	}
	what := domain.TruncateRunes(oneLine(s.last), 60)
	if s.tool != "" {
		what = domain.TruncateRunes(oneLine(s.tool), 60) + " (" + time.Since(s.toolBegan).Round(time.Second).String() + ")"
	}
	fmt.Fprintf(s.w, "\r\033[K⏱ %s · %s · %s", time.Since(s.began).Round(time.Second), plural(s.tools, "tool call", "tool calls"), what)
	s.visible = true
}

func (s *statusLine) stop() {
	close(s.done)
	s.wg.Wait()
	s.clear()
}

func oneLine(s string) string {
	out := []rune{}
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}
