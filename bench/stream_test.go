package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The stream of BenchmarkStream: one op is one whole run of a client on a
// fresh reference agent, from the start of the agent to its teardown:
// streamTurns turns of `#burst streamChunks`, on one session.
var (
	streamTurns  = flag.Int("stream-turns", 100, "BenchmarkStream: turns per op")
	streamChunks = flag.Int("stream-chunks", 1000, "BenchmarkStream: agent_message_chunk notifications per turn")
)

// streamClients are BenchmarkStream's clients, in the order they run.
var streamClients = []string{"library", "cli-human", "cli-json", "go-sdk", "floor"}

// BenchmarkStream runs the same stream through every client side by side:
// the library (app.Start, chunks through OnAgentText), the CLI (the built
// `acpdrive run` binary, its standard output a pipe that the benchmark
// reads and discards, human output and --json), the Go SDK client and the
// floor (a bare bufio.Scanner plus json.Unmarshal loop, floorClient).
//
// Metrics: notifs/s = notifications handled per second of the whole op
// (agent start, handshake, every turn, teardown); cpu-ns/notif = CPU time
// (user plus system) of the client's process per notification: for the
// in-process clients getrusage(RUSAGE_SELF) around the op (the agent is a
// child, so it is not counted), for the CLI the rusage of the CLI process
// itself as wait4 returns it (its agent, a grandchild, not counted; the
// benchmark's own reading of the pipe neither); lost/op = notifications
// the agent wrote that did not reach the handler (the CLI: that did not
// come out as an event line, checked with --json only).
func BenchmarkStream(b *testing.B) {
	for _, client := range streamClients {
		b.Run("client="+client, func(b *testing.B) {
			switch client {
			case "cli-human":
				benchCLIStream(b, false)
			case "cli-json":
				benchCLIStream(b, true)
			default:
				benchInProcessStream(b, inProcessStarter(client))
			}
		})
	}
}

// inProcessStarter is the starter of an in-process client of BenchmarkStream.
func inProcessStarter(client string) starter {
	switch client {
	case "library":
		return startAcpdrive(false)
	case "go-sdk":
		return startSDK
	case "floor":
		return startFloor
	}
	panic("unknown client " + client)
}

// streamRun is one op of BenchmarkStream.
type streamRun struct {
	notifs  int64 // notifications the client handled
	elapsed time.Duration
	cpu     time.Duration // the client process's user plus system time
	err     error         // the first turn error, if any
}

// runInProcessStream runs one op of an in-process client.
func runInProcessStream(ctx context.Context, start starter, turns, chunks int) (streamRun, error) {
	s := newSink(costTrivial)
	prompt := burstPrompt(chunks)
	cpu0 := selfCPU()
	t0 := time.Now()
	c, err := start(ctx, s)
	if err != nil {
		return streamRun{}, err
	}
	var firstErr error
	for range turns {
		if rep := c.turn(ctx, prompt); rep.err != nil && firstErr == nil {
			firstErr = rep.err
		}
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := c.stop(stopCtx); err != nil && firstErr == nil {
		firstErr = err
	}
	elapsed := time.Since(t0)
	cpu := selfCPU() - cpu0
	if m := groupMembers(c.pid()); len(m) > 0 {
		return streamRun{}, fmt.Errorf("agent process group %d still has live members %v after stop", c.pid(), m)
	}
	return streamRun{notifs: s.received(), elapsed: elapsed, cpu: cpu, err: firstErr}, nil
}

// runCLIStream runs one op of the CLI: `acpdrive run [--json]` with every
// turn's prompt, standard output a pipe read to its end in 64 KiB reads.
// With --json it counts the per-chunk message_chunk event lines; human
// output counts the bytes 'x' (the burst's chunk text is "x", and nothing
// else the CLI prints for this run holds one).
func runCLIStream(turns, chunks int, jsonOut, fast bool) (streamRun, []byte, error) {
	args := []string{"run", "--workspace", workspace}
	if jsonOut {
		args = append(args, "--json")
	}
	prompt := burstPrompt(chunks)
	for range turns {
		args = append(args, prompt)
	}
	cmd := exec.Command(agentBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return streamRun{}, nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return streamRun{}, nil, err
	}
	counter := &eventCounter{fast: fast}
	_, copyErr := io.CopyBuffer(counter, out, make([]byte, 64<<10))
	waitErr := cmd.Wait()
	elapsed := time.Since(t0)
	if copyErr != nil {
		return streamRun{}, nil, copyErr
	}
	if waitErr != nil {
		return streamRun{}, nil, fmt.Errorf("acpdrive run: %w; stderr: %s", waitErr, stderr.Bytes())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	run := streamRun{elapsed: elapsed, cpu: rusageCPU(ru), notifs: counter.xBytes}
	switch {
	case jsonOut && fast:
		// Every chunk's event line plus a few per turn: count the
		// chunks as all there when the lines are.
		run.notifs = min(counter.lines, int64(turns*chunks))
	case jsonOut:
		run.notifs = counter.chunkEvents
	}
	return run, counter.tail, nil
}

// chunkEventLine is how the CLI's --json starts the message_chunk event
// every text chunk produces.
var chunkEventLine = []byte(`{"type":"message_chunk","time":`)

// eventCounter counts the per-chunk message_chunk event lines of --json
// output as it passes, and keeps the last
// bytes of the output. With fast (in benchmarks, so that the reader of the
// pipe takes as little of the machine as it can) it only counts lines and
// 'x' bytes; TestStreamClients checks the exact counts.
type eventCounter struct {
	fast        bool
	lines       int64
	partial     []byte // an unfinished line carried over between writes
	chunkEvents int64
	xBytes      int64
	tail        []byte
}

func (c *eventCounter) Write(p []byte) (int, error) {
	if c.fast {
		c.lines += int64(bytes.Count(p, []byte{'\n'}))
		c.xBytes += int64(bytes.Count(p, []byte{'x'}))
		return len(p), nil
	}
	data := p
	if len(c.partial) > 0 {
		data = append(c.partial, p...)
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := data[:i]
		if bytes.HasPrefix(line, chunkEventLine) {
			c.chunkEvents++
		}
		data = data[i+1:]
	}
	c.partial = append(c.partial[:0], data...)
	c.xBytes += int64(bytes.Count(p, []byte{'x'}))
	c.tail = append(c.tail, p...)
	if len(c.tail) > 4096 {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-4096:]...)
	}
	return len(p), nil
}

func benchInProcessStream(b *testing.B, start starter) {
	benchStream(b, func() (streamRun, error) {
		return runInProcessStream(context.Background(), start, *streamTurns, *streamChunks)
	})
}

func benchCLIStream(b *testing.B, jsonOut bool) {
	benchStream(b, func() (streamRun, error) {
		run, _, err := runCLIStream(*streamTurns, *streamChunks, jsonOut, true)
		return run, err
	})
}

// benchStream runs b.N ops and reports the stream metrics.
func benchStream(b *testing.B, op func() (streamRun, error)) {
	expected := int64(*streamTurns * *streamChunks)
	var notifs, lost int64
	var elapsed, cpu time.Duration
	var firstErr error
	for b.Loop() {
		run, err := op()
		if err != nil {
			b.Fatal(err)
		}
		notifs += run.notifs
		lost += expected - run.notifs
		elapsed += run.elapsed
		cpu += run.cpu
		if run.err != nil && firstErr == nil {
			firstErr = run.err
		}
	}
	if elapsed > 0 && notifs > 0 {
		b.ReportMetric(float64(notifs)/elapsed.Seconds(), "notifs/s")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(notifs), "cpu-ns/notif")
	}
	b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
	if firstErr != nil {
		b.Logf("first turn error: %v", firstErr)
	}
}

// selfCPU is this process's user plus system time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return rusageCPU(&ru)
}

func rusageCPU(ru *syscall.Rusage) time.Duration {
	if ru == nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestStreamClients runs a short stream through every client of
// BenchmarkStream and checks that each handled every notification, so the
// benchmark compares clients that did the same work.
func TestStreamClients(t *testing.T) {
	const turns, chunks = 3, 500
	for _, client := range streamClients {
		t.Run(client, func(t *testing.T) {
			var run streamRun
			var err error
			var tail []byte
			switch client {
			case "cli-human":
				run, tail, err = runCLIStream(turns, chunks, false, false)
			case "cli-json":
				run, tail, err = runCLIStream(turns, chunks, true, false)
			default:
				run, err = runInProcessStream(context.Background(), inProcessStarter(client), turns, chunks)
			}
			if err != nil {
				t.Fatal(err)
			}
			if run.err != nil {
				t.Fatalf("turn error: %v", run.err)
			}
			if run.notifs != turns*chunks {
				t.Errorf("handled %d notifications, want %d", run.notifs, turns*chunks)
			}
			if client == "cli-human" {
				want := "turn " + strconv.Itoa(turns) + ": turn_completed"
				if !bytes.Contains(tail, []byte(want)) {
					t.Errorf("human output does not end with the last turn's summary %q; tail: %q", want, tail)
				}
			}
		})
	}
}
