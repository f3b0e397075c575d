package linewatch_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpdrive/acpdrive/adapters/linewatch"
)

// A runtime's output read through a watching reader: each line is shown
// to Received while Watching reports true, and read unchanged.
func ExampleNewReader() {
	watching := true
	r := linewatch.NewReader(strings.NewReader(`{"id":1,"result":{}}`+"\n"+`{"method":"session/update"}`+"\n"), linewatch.Hooks{
		Watching: func() bool { return watching },
		Received: func(line []byte) { fmt.Printf("line: %s\n", line) },
	})
	out, _ := io.ReadAll(r)
	fmt.Print(string(out))
	// Output:
	// line: {"id":1,"result":{}}
	// line: {"method":"session/update"}
	// {"id":1,"result":{}}
	// {"method":"session/update"}
}
