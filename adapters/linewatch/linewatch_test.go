package linewatch_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/linewatch"
	"github.com/acpdrive/acpdrive/ports"
)

// TestReaderLines: the lines read are given whole however the reads
// split them; a line begun while nothing watched, or over MaxLine, is
// not given; what is read is unchanged.
func TestReaderLines(t *testing.T) {
	cases := []struct {
		name    string
		input   string
		watchAt int   // the line from which Watching reports true
		sizes   []int // the reads' sizes; nil: 1, 2, 3, 5 and 64
		want    []string
	}{
		{"all watched", "a\nbb\n\nccc\n", 0, nil, []string{"a", "bb", "", "ccc"}},
		{"a last line without terminator", "a\nbb", 0, nil, []string{"a"}},
		{"too long", "a\n" + strings.Repeat("x", 9) + "\nb\n", 0, nil, []string{"a", "b"}},
		{"watched from the third, read by lines", "a\nb\nc\nd\n", 2, []int{1, 2}, []string{"c", "d"}},
		{"watched from the third, a line begun unwatched", "a\nb\nc\nd\n", 2, []int{5}, []string{"d"}},
		{"never watched", "a\nb\n", 99, nil, nil},
	}
	for _, c := range cases {
		sizes := c.sizes
		if sizes == nil {
			sizes = []int{1, 2, 3, 5, 64}
		}
		for _, size := range sizes {
			var got []string
			lines := 0
			h := linewatch.Hooks{
				Watching: func() bool { return lines >= c.watchAt },
				Received: func(l []byte) { got = append(got, string(l)) },
				MaxLine:  8,
			}
			src := &countingReader{r: strings.NewReader(c.input), lines: &lines}
			r := linewatch.NewReader(src, h)
			var out bytes.Buffer
			buf := make([]byte, size)
			for {
				n, err := r.Read(buf)
				out.Write(buf[:n])
				if err != nil {
					break
				}
			}
			assert.Equal(t, c.want, got, "%s, reads of %d", c.name, size)
			assert.Equal(t, c.input, out.String(), "%s, reads of %d", c.name, size)
		}
	}
}

// countingReader counts the line ends read before each Read (so
// Watching can turn on from a line).
type countingReader struct {
	r     io.Reader
	lines *int
	seen  int
}

func (c *countingReader) Read(b []byte) (int, error) {
	*c.lines = c.seen
	n, err := c.r.Read(b)
	c.seen += bytes.Count(b[:n], []byte("\n"))
	return n, err
}

// TestWrapShowsLines: a wrapped launcher's runtime shows the lines
// written to it (before they are written) and those it wrote, and its
// host once started; the streams pass everything unchanged.
func TestWrapShowsLines(t *testing.T) {
	var sent, received []string
	host := "unset"
	inner := &fakeLauncher{out: "x\ny\n"}
	l := linewatch.Wrap(inner, linewatch.Hooks{
		Started:  func(h string) { host = h },
		Sent:     func(b []byte) { sent = append(sent, string(b)+"|"+inner.in.String()) },
		Received: func(b []byte) { received = append(received, string(b)) },
	})
	p, err := l.Prepare(ports.LaunchRequest{Command: []string{"agent"}})
	require.NoError(t, err)
	proc, err := p.Start(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "", host)
	_, err = proc.Stdin().Write([]byte("one\n"))
	require.NoError(t, err)
	_, err = proc.Stdin().Write([]byte("two\n"))
	require.NoError(t, err)
	require.NoError(t, proc.Stdin().Close())
	out, err := io.ReadAll(proc.Stdout())
	require.NoError(t, err)
	assert.Equal(t, []string{"one\n|", "two\n|one\n"}, sent, "shown before written")
	assert.Equal(t, "one\ntwo\n", inner.in.String())
	assert.Equal(t, []string{"x", "y"}, received)
	assert.Equal(t, "x\ny\n", string(out))
	assert.True(t, inner.closed)
}

// fakeLauncher starts a fake runtime whose standard input is recorded
// and whose standard output is out.
type fakeLauncher struct {
	out    string
	in     bytes.Buffer
	closed bool
}

func (f *fakeLauncher) Prepare(ports.LaunchRequest) (ports.Plan, error) { return fakePlan{f}, nil }

type fakePlan struct{ f *fakeLauncher }

func (fakePlan) Target() ports.Target { return ports.Target{} }

func (p fakePlan) Start(context.Context, []string) (ports.Process, error) {
	return &fakeProcess{f: p.f, out: strings.NewReader(p.f.out)}, nil
}

// fakeProcess implements the streams and identity; the other methods
// are not called here.
type fakeProcess struct {
	ports.Process
	f   *fakeLauncher
	out io.Reader
}

func (p *fakeProcess) Identity() ports.Identity { return ports.Identity{PID: 1} }
func (p *fakeProcess) Stdin() io.WriteCloser    { return fakeStdin{p.f} }
func (p *fakeProcess) Stdout() io.Reader        { return p.out }

type fakeStdin struct{ f *fakeLauncher }

func (s fakeStdin) Write(b []byte) (int, error) { return s.f.in.Write(b) }
func (s fakeStdin) Close() error                { s.f.closed = true; return nil }
