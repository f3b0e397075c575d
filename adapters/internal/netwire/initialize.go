package netwire

import (
	"bytes"
	"encoding/json"
)

// InitializeID is the id of msg when it is an initialize request, nil
// otherwise: both ends watch for its answer, which carries (or gains) the
// transport's resumable capability.
func InitializeID(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"initialize"`)) {
		return nil
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "initialize" || len(m.ID) == 0 {
		return nil
	}
	return bytes.Clone(m.ID)
}

// Answers reports whether msg is the answer (a result or an error) to the
// request whose id is id.
func Answers(msg, id []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == "" && bytes.Equal(m.ID, id)
}
