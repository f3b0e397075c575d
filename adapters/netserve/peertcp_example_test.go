package netserve_test

import (
	"fmt"
	"strings"

	"github.com/acpdrive/acpdrive/adapters/netserve"
)

// A server for one user alone, as a holder of held sessions is: a token
// and, on Linux, only the loopback peers of this process's user
// (docs/behaviour.md#held-sessions).
func ExampleOptions_sameUserOnly() {
	s, err := netserve.Listen(netserve.Options{
		Listen: "http://127.0.0.1:0", Command: []string{"my-agent", "--acp"}, Launcher: refuse{},
		Token: "a-long-random-token", SameUserOnly: true,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(strings.HasPrefix(s.URL(), "http://127.0.0.1:"))
	// Output:
	// true
}
