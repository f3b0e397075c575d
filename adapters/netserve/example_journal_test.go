package netserve_test

import (
	"fmt"
	"os"

	"github.com/acpdrive/acpdrive/adapters/netserve"
)

// A journal on disk keeps each connection's messages beyond the
// Retention held in memory, bounded per connection; its directory must
// exist.
func ExampleOptions_journalDir() {
	dir, err := os.MkdirTemp("", "journal")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	s, err := netserve.Listen(netserve.Options{
		Listen: "http://127.0.0.1:0", Command: []string{"my-agent", "--acp"}, Launcher: refuse{},
		JournalDir: dir, JournalBytes: 16 << 20, // 16 MiB per connection
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	_, err = netserve.Listen(netserve.Options{
		Listen: "http://127.0.0.1:0", Command: []string{"my-agent", "--acp"}, Launcher: refuse{},
		JournalDir: dir + "/missing",
	})
	fmt.Println(err != nil)
	// Output:
	// true
}
