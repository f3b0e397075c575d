// Package procio is the stream plumbing every ports.Process shares: the
// three pipes of a child, standard input with an idempotent Close, the
// standard-error copier that keeps the 8 KiB tail, the exit value, and the
// bounded steps of Release that concern the streams
// (docs/behaviour.md#teardown, steps 8 to 10).
//
// It is part of the adapters' shared kit: localexec, sshexec (both
// transports) and inprocess embed it; only adapters import it
// (test/imports_test.go).
package procio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// Contract messages of a pipe that cannot be made
// (docs/behaviour.md#start-up).
const (
	MsgStdinPipeFailed  = "failed to create stdin pipe"
	MsgStdoutPipeFailed = "failed to create stdout pipe"
	MsgStderrPipeFailed = "failed to create stderr pipe"
)

// StderrSettle bounds StderrTail's wait for the end of standard error once
// the process has exited.
const StderrSettle = 250 * time.Millisecond

// stderrReadSize is the copier's read buffer: small and its own, so an
// idle session holds no 32 KiB buffer while its read waits.
const stderrReadSize = 1 << 10

// Pipes are the three pipes of a child's standard streams, both ends.
type Pipes struct {
	// The child's ends.
	StdinR, StdoutW, StderrW *os.File
	// This side's ends.
	StdinW, StdoutR, StderrR *os.File
}

// OpenPipes makes the three pipes. The error is a *domain.AgentError of
// kind port_exit naming the pipe; nothing is left open then.
func OpenPipes() (*Pipes, error) {
	p := &Pipes{}
	var err error
	if p.StdinR, p.StdinW, err = os.Pipe(); err != nil {
		return nil, domain.WrapError(domain.KindPortExit, MsgStdinPipeFailed, err)
	}
	if p.StdoutR, p.StdoutW, err = os.Pipe(); err != nil {
		p.CloseAll()
		return nil, domain.WrapError(domain.KindPortExit, MsgStdoutPipeFailed, err)
	}
	if p.StderrR, p.StderrW, err = os.Pipe(); err != nil {
		p.CloseAll()
		return nil, domain.WrapError(domain.KindPortExit, MsgStderrPipeFailed, err)
	}
	return p, nil
}

// CloseChildEnds closes the child's ends: once the child holds its own
// copies (or an in-process agent has returned), keeping them would stop
// standard output and error from ever reaching their end.
func (p *Pipes) CloseChildEnds() {
	for _, f := range []*os.File{p.StdinR, p.StdoutW, p.StderrW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// CloseAll closes every end, for a start that failed.
func (p *Pipes) CloseAll() {
	p.CloseChildEnds()
	for _, f := range []*os.File{p.StdinW, p.StdoutR, p.StderrR} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// Streams returns this side's ends as Streams; sink is as in Config.
func (p *Pipes) Streams(sink func(tail io.Writer) io.Writer) *Streams {
	return Start(Config{
		Stdin:       &FileStdin{f: p.StdinW},
		Stdout:      p.StdoutR,
		CloseStdout: p.StdoutR.Close,
		Stderr:      p.StderrR,
		CloseStderr: p.StderrR.Close,
		StderrSink:  sink,
	})
}

// FileStdin is the write end of a child's standard input: Close is
// idempotent (the caller's close step and Release both run it), and
// SetWriteDeadline bounds the next writes so a runtime that stops reading
// cannot block a writer forever.
type FileStdin struct {
	f    *os.File
	once sync.Once
	err  error
}

// Write writes to the child's standard input.
func (s *FileStdin) Write(b []byte) (int, error) { return s.f.Write(b) }

// SetWriteDeadline bounds the next writes.
func (s *FileStdin) SetWriteDeadline(t time.Time) error { return s.f.SetWriteDeadline(t) }

// Close closes the write end once; later calls return the first result.
func (s *FileStdin) Close() error {
	s.once.Do(func() { s.err = s.f.Close() })
	return s.err
}

// Config describes the streams of one process.
type Config struct {
	// Stdin is the runtime's standard input; its Close must be idempotent.
	Stdin io.WriteCloser
	// Stdout is the runtime's standard output.
	Stdout io.Reader
	// CloseStdout ends every read of Stdout; Streams calls it once.
	CloseStdout func() error
	// Stderr is the runtime's standard error, copied until its end.
	Stderr io.Reader
	// CloseStderr ends a read of Stderr in progress; Streams calls it at
	// most once. Nil when the stream ends only with its source.
	CloseStderr func() error
	// StderrSink, when set, returns the writer the copier writes to, given
	// the tail buffer (to filter or tee what is kept). A sink with a Flush
	// method is flushed when standard error ends.
	StderrSink func(tail io.Writer) io.Writer
}

// Streams is the shared part of a ports.Process: Stdin, Stdout, Exited,
// Exit, StderrTail and CloseStdout, for a process type to embed. Its
// stderr copier runs from Start until standard error ends or is closed.
type Streams struct {
	stdin       io.WriteCloser
	stdout      io.Reader
	closeStdout func() error
	stderr      io.Reader
	closeStderr func() error

	tail       domain.TailBuffer
	copierDone chan struct{}

	exitOnce sync.Once
	exited   chan struct{}
	mu       sync.Mutex
	exit     domain.ExitStatus

	stdoutOnce, stderrOnce sync.Once
	stdoutErr, stderrErr   error
}

// Start returns the streams of c and starts the stderr copier; the copier
// returns once standard error ends, which DrainStderr waits for.
func Start(c Config) *Streams {
	s := &Streams{
		stdin:       c.Stdin,
		stdout:      c.Stdout,
		closeStdout: c.CloseStdout,
		stderr:      c.Stderr,
		closeStderr: c.CloseStderr,
		copierDone:  make(chan struct{}),
		exited:      make(chan struct{}),
	}
	var w io.Writer = &s.tail
	if c.StderrSink != nil {
		w = c.StderrSink(&s.tail)
	}
	go s.copyStderr(w)
	return s
}

// copyStderr keeps the tail until end of file or the error a closed read
// end reports; either way there is nothing more to keep.
func (s *Streams) copyStderr(w io.Writer) {
	defer close(s.copierDone)
	buf := make([]byte, stderrReadSize)
	for {
		n, err := s.stderr.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	if f, ok := w.(interface{ Flush() }); ok {
		f.Flush()
	}
}

// Stdin is the runtime's standard input. Closing it more than once is
// harmless.
func (s *Streams) Stdin() io.WriteCloser { return s.stdin }

// Stdout is the runtime's standard output.
func (s *Streams) Stdout() io.Reader { return s.stdout }

// Exited is closed once SetExit has recorded how the process ended.
func (s *Streams) Exited() <-chan struct{} { return s.exited }

// Exit reports how the process ended; the zero ExitStatus until Exited is
// closed.
func (s *Streams) Exit() domain.ExitStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit
}

// SetExit records how the process ended and closes Exited; later calls do
// nothing.
func (s *Streams) SetExit(st domain.ExitStatus) {
	s.exitOnce.Do(func() {
		s.mu.Lock()
		s.exit = st
		s.mu.Unlock()
		close(s.exited)
	})
}

// StderrDone is closed once the stderr copier has returned.
func (s *Streams) StderrDone() <-chan struct{} { return s.copierDone }

// StderrTail returns the last bytes (at most 8 KiB) written to standard
// error and whether earlier bytes were cut off. Once the process has
// exited, it first waits up to StderrSettle for standard error's end, so
// a runtime that wrote its last words and exited is reported whole (a
// descendant holding the stream only delays this by the bound).
func (s *Streams) StderrTail() ([]byte, bool) {
	select {
	case <-s.exited:
		s.WaitStderr(StderrSettle)
	default:
	}
	return s.tail.Tail()
}

// WaitStderr waits up to bound for standard error's end and reports
// whether it came.
func (s *Streams) WaitStderr(bound time.Duration) bool {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-s.copierDone:
		return true
	case <-t.C:
		return false
	}
}

// CloseStdout ends every read of standard output, even while a descendant
// holds the write end. Later calls return the first call's result.
func (s *Streams) CloseStdout() error {
	s.stdoutOnce.Do(func() {
		if s.closeStdout != nil {
			s.stdoutErr = s.closeStdout()
		}
	})
	return s.stdoutErr
}

func (s *Streams) closeStderrOnce() error {
	s.stderrOnce.Do(func() {
		if s.closeStderr != nil {
			s.stderrErr = s.closeStderr()
		}
	})
	return s.stderrErr
}

// DrainStderr waits up to bound for standard error to reach its end, then
// closes it (a descendant may hold it open) and waits up to bound again
// for the copier. The error says the copier had not returned.
func (s *Streams) DrainStderr(bound time.Duration) error {
	if s.WaitStderr(bound) {
		return nil
	}
	_ = s.closeStderrOnce()
	if s.WaitStderr(bound) {
		return nil
	}
	return errors.New("standard error had not ended at release")
}

// CloseStdin closes standard input; an end already closed is not an
// error.
func (s *Streams) CloseStdin() error {
	if err := s.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("close stdin: %w", err)
	}
	return nil
}

// CloseReadEnds closes standard output and error; an end already closed
// is not an error.
func (s *Streams) CloseReadEnds() error {
	var errs []error
	if err := s.CloseStdout(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("close stdout: %w", err))
	}
	if err := s.closeStderrOnce(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("close stderr: %w", err))
	}
	return errors.Join(errs...)
}

// Release runs the stream steps of Release for a watched child: close
// standard input, drain standard error (bounded, see DrainStderr), wait up
// to reapBound for reaped, and close the read ends. what names the
// process in the errors ("ssh 123").
func (s *Streams) Release(reaped <-chan struct{}, reapBound, drainBound time.Duration, what string) error {
	errs := []error{s.CloseStdin(), s.DrainStderr(drainBound)}
	t := time.NewTimer(reapBound)
	select {
	case <-reaped:
	case <-t.C:
		errs = append(errs, fmt.Errorf("%s had not exited at release", what))
	}
	t.Stop()
	errs = append(errs, s.CloseReadEnds())
	return errors.Join(errs...)
}

// Closed reports whether ch is closed, without waiting.
func Closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
