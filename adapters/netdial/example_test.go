package netdial_test

import (
	"fmt"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/ports"
)

// A launcher for a runtime at a URL: app.Options.Launcher takes it as it
// takes a local one; the token, when the operator names its variable, is
// read at each connection.
func ExampleNew() {
	l, err := netdial.New(netdial.Options{URL: "tcp://127.0.0.1:7000", TokenEnv: "ACP_TOKEN"})
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, err := l.Prepare(ports.LaunchRequest{Workspace: "/srv/repo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.URL(), plan.Target().Remote())

	_, err = netdial.New(netdial.Options{URL: "ftp://127.0.0.1:21"})
	fmt.Println(err)
	// Output:
	// tcp://127.0.0.1:7000 true
	// agent: agent_not_found: address "ftp://127.0.0.1:21": scheme "ftp" is not one of tcp://HOST:PORT, unix:PATH, ws://…, wss://…, http://…, https://…
}

// A launcher whose start resumes a held WebSocket connection instead of
// opening one: what acpdrive attach uses (docs/behaviour.md#held-sessions).
// The cursor "" asks for every message the server still holds.
func ExampleResume() {
	l, err := netdial.New(netdial.Options{
		URL: "ws://127.0.0.1:7000/acp", TokenEnv: "ACP_TOKEN",
		Resume: &netdial.Resume{Connection: "0f3a9c", Cursor: ""},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.URL())
	// Output:
	// ws://127.0.0.1:7000/acp
}
