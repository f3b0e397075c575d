//go:build !linux

package localexec

import (
	"errors"
	"log/slog"

	"github.com/acpdrive/acpdrive/domain"
)

// errContainUnsupported says why Options.Contain has no effect here.
var errContainUnsupported = errors.New("process containment works on Linux only")

// tree is never made on this platform.
type tree struct{}

// newTree reports that containment is not available.
func newTree(*slog.Logger) (*tree, error) { return nil, errContainUnsupported }

func (*tree) envEntry() string { return "" }

func (*tree) attach(int, int) {}

func (*tree) signal(sigKind, func(int) bool) ([]domain.Survivor, bool, error) {
	return nil, false, nil
}

// noteLeader records nothing here: no tree is walked.
func noteLeader(int) {}

// forgetLeader only reaps here.
func forgetLeader(_ int, reap func()) { reap() }

func (*tree) walks() bool { return false }

func (*tree) scanWholeTable() {}
