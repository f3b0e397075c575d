package netwire

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// Headers of ACP's Streamable HTTP transport (docs/behaviour.md#network).
const (
	// HeaderConnection carries the connection id the initialize answer
	// assigns; every later request names it.
	HeaderConnection = "Acp-Connection-Id"
	// HeaderSession names the session a request is about.
	HeaderSession = "Acp-Session-Id"
	// HeaderLastEventID asks a reopened stream to resume after an event.
	HeaderLastEventID = "Last-Event-ID"
	// HeaderIdempotencyKey names one client message on Streamable HTTP,
	// the same on every attempt: an HTTP client may send a POST with it
	// again after the keep-alive connection it went on died, and the
	// server hands a message on once, whatever the attempts.
	HeaderIdempotencyKey = "Idempotency-Key"
)

// Event is one server-sent event.
type Event struct {
	// ID is the event's id, "" when it had none.
	ID string
	// Data is the event's data, its lines joined by "\n".
	Data []byte
}

// ReadEvent reads the next event with data from r (comments, fields
// other than id and data, and events without data are skipped).
func ReadEvent(r *bufio.Reader) (Event, error) {
	var ev Event
	var data [][]byte
	for {
		line, err := ReadLine(r)
		if err != nil {
			if err == io.EOF && len(data) > 0 {
				ev.Data = bytes.Join(data, []byte("\n"))
				return ev, nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			switch len(data) {
			case 0:
				continue
			case 1:
				ev.Data = data[0] // the common case: one line, no join
			default:
				ev.Data = bytes.Join(data, []byte("\n"))
			}
			return ev, nil
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			data = append(data, bytes.Clone(value))
		case "id":
			ev.ID = string(value)
		}
	}
}

// WriteEvent writes one event with id seq and a one-line JSON message.
func WriteEvent(w io.Writer, seq int64, msg []byte) error {
	buf := make([]byte, 0, len(msg)+32)
	buf = append(buf, "id: "...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, msg...)
	buf = append(buf, "\n\n"...)
	_, err := w.Write(buf)
	return err
}
