package journaltail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/acpdrive/acpdrive/domain"
)

// PrivateDir creates a start's private temporary directory in parent
// (empty: the default directory for temporary files), named from prefix
// and open to this user only. The caller removes it.
func PrivateDir(parent, prefix string) (string, error) {
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func joinAll(dir string, sub []string) string {
	return filepath.Join(append([]string{dir}, sub...)...)
}

// Private is a start's private directory and whether the measurement
// that owns it was released. Its methods are called with the
// measurement's lock held.
type Private struct {
	name, dir string
	released  bool
}

// NewPrivate returns the Private of dir; name prefixes its errors.
func NewPrivate(name, dir string) Private { return Private{name: name, dir: dir} }

// Released reports whether Remove was called.
func (p *Private) Released() bool { return p.released }

// Remove removes the directory the first time it is called; later calls
// do nothing.
func (p *Private) Remove() error {
	if p.released {
		return nil
	}
	p.released = true
	if err := os.RemoveAll(p.dir); err != nil {
		return fmt.Errorf("%s: removing the temporary directory: %w", p.name, err)
	}
	return nil
}

// ErrReleased is the error of a wait on a released measurement.
var ErrReleased = errors.New("measurement released")

// Wait is Wait for a measurement that may have been released: a wait on a
// released one, or one released meanwhile, fails with ErrReleased under
// the measurement's name.
func (p *Private) Wait(ctx context.Context, mu sync.Locker, t Turns, w Waiting) (domain.Usage, string, bool, error) {
	if p.released {
		return domain.Usage{}, "", false, fmt.Errorf("%s: %w", p.name, ErrReleased)
	}
	u, model, ok, err := Wait(ctx, mu, t, w)
	if errors.Is(err, ErrReleased) {
		err = fmt.Errorf("%s: %w", p.name, err)
	}
	return u, model, ok, err
}
