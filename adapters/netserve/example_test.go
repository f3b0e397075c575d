package netserve_test

import (
	"errors"
	"fmt"

	"github.com/acpdrive/acpdrive/adapters/netserve"
	"github.com/acpdrive/acpdrive/ports"
)

// refuse is a launcher that starts nothing (the CLI passes the local
// one).
type refuse struct{}

func (refuse) Prepare(ports.LaunchRequest) (ports.Plan, error) { return nil, errors.New("not here") }

// Listening where others can reach needs a token; on loopback, port 0
// picks a free port and URL says what a client dials.
func ExampleListen() {
	_, err := netserve.Listen(netserve.Options{Listen: "tcp://0.0.0.0:0", Command: []string{"my-agent", "--acp"}, Launcher: refuse{}})
	fmt.Println(errors.Is(err, netserve.ErrTokenRequired))

	s, err := netserve.Listen(netserve.Options{Listen: "http://127.0.0.1:0", Command: []string{"my-agent", "--acp"}, Launcher: refuse{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(len(s.URL()) > len("ws://127.0.0.1:/acp"))
	// Output:
	// true
	// true
}
