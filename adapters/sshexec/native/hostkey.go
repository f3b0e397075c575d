package native

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/acpdrive/acpdrive/domain"
)

// HostKeyError is the cause of a Start error when the server's host key
// was refused.
type HostKeyError struct {
	// Host is the name the key was checked under (host, or [host]:port).
	Host string
	// Changed reports a key that differs from the one known_hosts has;
	// false means the key was unknown and the policy is "yes".
	Changed bool
	// Offered is the fingerprint (SHA256) of the key the server offered.
	Offered string
	// KnownAt names where the recorded keys are ("file:line"), for a
	// changed key.
	KnownAt []string
}

func (e *HostKeyError) Error() string {
	if e.Changed {
		return fmt.Sprintf("Host key verification failed: host key for %s changed: the server offered %s, which does not match the key recorded at %v; "+
			"if the change is expected, remove the old key (ssh-keygen -R %s) and connect again",
			e.Host, e.Offered, e.KnownAt, e.Host)
	}
	return fmt.Sprintf("Host key verification failed: host key for %s is not known and StrictHostKeyChecking is yes: the server offered %s; "+
		"add it to known_hosts first", e.Host, e.Offered)
}

// knownHostsMu serialises additions to known_hosts files within this
// process.
var knownHostsMu sync.Mutex

// hostKeyChecker checks host keys against known_hosts files under a
// policy.
type hostKeyChecker struct {
	policy string   // accept-new, yes or no
	files  []string // the first one receives additions
	onAdd  func(file, host string)
}

// existing returns the files that exist (knownhosts.New refuses missing
// ones).
func (h *hostKeyChecker) existing() ([]string, error) {
	var out []string
	for _, f := range h.files {
		if _, err := os.Stat(f); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// lookup returns a knownhosts callback over the files that exist, or nil
// when none does.
func (h *hostKeyChecker) lookup() (ssh.HostKeyCallback, error) {
	files, err := h.existing()
	if err != nil || len(files) == 0 {
		return nil, err
	}
	return knownhosts.New(files...)
}

// algorithms returns the host key algorithms to ask the server for: those
// of the keys known for addr, so that a host known by an ed25519 key is
// not reported as changed because the server offered its RSA key first.
// Nil (the library's default order) when nothing is known or the policy
// is "no".
func (h *hostKeyChecker) algorithms(addr string) []string {
	if h.policy == domain.StrictHostKeyNo {
		return nil
	}
	cb, err := h.lookup()
	if err != nil || cb == nil {
		return nil
	}
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil
	}
	var ke *knownhosts.KeyError
	if !errors.As(cb(addr, probeAddr(addr), probe), &ke) || len(ke.Want) == 0 {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			algos = append(algos, a)
		}
	}
	for _, k := range ke.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512)
			add(ssh.KeyAlgoRSASHA256)
			add(ssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	return algos
}

// probeAddr is a stand-in remote address for the algorithm probe; the
// knownhosts callback uses it only for @cert-authority and IP matching.
func probeAddr(addr string) net.Addr {
	if a, err := net.ResolveTCPAddr("tcp", addr); err == nil {
		return a
	}
	return &net.TCPAddr{IP: net.IPv4zero}
}

// callback returns the HostKeyCallback the handshake uses.
func (h *hostKeyChecker) callback() ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		if h.policy == domain.StrictHostKeyNo {
			return nil
		}
		known := knownhosts.Normalize(hostname)
		cb, err := h.lookup()
		if err != nil {
			return fmt.Errorf("read known_hosts: %w", err)
		}
		if cb != nil {
			err = cb(hostname, remote, key)
			if err == nil {
				return nil
			}
			var ke *knownhosts.KeyError
			if !errors.As(err, &ke) {
				return fmt.Errorf("check host key for %s: %w", known, err)
			}
			if len(ke.Want) > 0 {
				e := &HostKeyError{Host: known, Changed: true, Offered: ssh.FingerprintSHA256(key)}
				for _, w := range ke.Want {
					e.KnownAt = append(e.KnownAt, fmt.Sprintf("%s:%d", w.Filename, w.Line))
				}
				return e
			}
		}
		// Unknown key.
		if h.policy != domain.StrictHostKeyAcceptNew {
			return &HostKeyError{Host: known, Offered: ssh.FingerprintSHA256(key)}
		}
		return h.add(known, key)
	}
}

// add records key for host in the first known_hosts file, creating the
// file (and its directory) when needed.
func (h *hostKeyChecker) add(host string, key ssh.PublicKey) error {
	if len(h.files) == 0 {
		return errors.New("no known_hosts file to record the new host key in")
	}
	file := h.files[0]
	knownHostsMu.Lock()
	defer knownHostsMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("record host key for %s: %w", host, err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("record host key for %s: %w", host, err)
	}
	line := knownhosts.Line([]string{host}, key) + "\n"
	if info, statErr := f.Stat(); statErr == nil && info.Size() > 0 {
		// Make sure the new line does not run on from an unterminated one.
		if last, readErr := lastByte(file); readErr == nil && last != '\n' {
			line = "\n" + line
		}
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record host key for %s: %w", host, err)
	}
	if h.onAdd != nil {
		h.onAdd(file, host)
	}
	return nil
}

func lastByte(name string) (byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, info.Size()-1); err != nil {
		return 0, err
	}
	return b[0], nil
}
