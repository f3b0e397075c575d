package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// refusingTarget refuses every steer the way a session between turns does.
type refusingTarget struct {
	mu   sync.Mutex
	got  []string
	done chan struct{}
}

func (r *refusingTarget) Steer(_ context.Context, text string, _ ...app.SteerMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, text)
	if len(r.got) == 2 {
		close(r.done)
	}
	return domain.NewError(domain.KindResponseError, domain.MsgSteerNoTurn)
}

// A line read between turns is refused, with a notice naming why; empty
// lines are skipped.
func TestStdinSteererBetweenTurnsNotice(t *testing.T) {
	target := &refusingTarget{done: make(chan struct{})}
	var mu sync.Mutex
	var notices []string
	s := newStdinSteerer(context.Background(), true, strings.NewReader("one\n\ntwo\n"), target, func(err error) {
		mu.Lock()
		notices = append(notices, err.Error())
		mu.Unlock()
	})
	<-target.done
	s.close()
	assert.Equal(t, []string{"one", "two"}, target.got)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, notices)
	assert.Contains(t, notices[0], "agent: response_error")
	assert.Contains(t, notices[0], domain.MsgSteerNoTurn)
	assert.Nil(t, newStdinSteerer(context.Background(), false, &bytes.Buffer{}, target, nil))
}
