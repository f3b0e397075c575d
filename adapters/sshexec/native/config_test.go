package native

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSplitHost(t *testing.T) {
	cases := []struct {
		in         string
		user, host string
		port       int
		bad        bool
	}{
		{in: "build-7", host: "build-7"},
		{in: "ci@build-7", user: "ci", host: "build-7"},
		{in: "ci@10.0.0.5:2222", user: "ci", host: "10.0.0.5", port: 2222},
		{in: "[::1]:2200", host: "::1", port: 2200},
		{in: "::1", host: "::1"},
		{in: "h:0", bad: true},
		{in: "h:x", bad: true},
		{in: "", bad: true},
	}
	for _, c := range cases {
		u, h, p, err := splitHost(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("splitHost(%q) = %q %q %d, want an error", c.in, u, h, p)
			}
			continue
		}
		if err != nil || u != c.user || h != c.host || p != c.port {
			t.Errorf("splitHost(%q) = %q %q %d %v, want %q %q %d", c.in, u, h, p, err, c.user, c.host, c.port)
		}
	}
}

func TestResolveHonoursTheClientConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config")
	content := `Host build
  HostName 127.0.0.9
  Port 2022
  User runner
  IdentityFile ~/keys/%r-%h
  IdentityFile /abs/key
  UserKnownHostsFile ~/kh1 /abs/kh2
  StrictHostKeyChecking yes
  ConnectTimeout 7
  ServerAliveInterval 4
  ServerAliveCountMax 5
Host *
  User fallback
`
	if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := resolve(Options{Host: "build", ConfigFile: cfg}, "/home/me", "me")
	if err != nil {
		t.Fatal(err)
	}
	if s.hostName != "127.0.0.9" || s.port != 2022 || s.user != "runner" || s.addr() != "127.0.0.9:2022" {
		t.Errorf("host %q port %d user %q", s.hostName, s.port, s.user)
	}
	if len(s.identities) != 2 || s.identities[0] != "/home/me/keys/runner-127.0.0.9" || s.identities[1] != "/abs/key" {
		t.Errorf("identities %q", s.identities)
	}
	if len(s.knownHosts) != 2 || s.knownHosts[0] != "/home/me/kh1" || s.knownHosts[1] != "/abs/kh2" {
		t.Errorf("known hosts %q", s.knownHosts)
	}
	if s.strict != "yes" || s.connectTimeout != 7*time.Second || s.aliveInterval != 4*time.Second || s.aliveCountMax != 5 {
		t.Errorf("strict %q timeout %v alive %v/%d", s.strict, s.connectTimeout, s.aliveInterval, s.aliveCountMax)
	}

	// What Options.Host says wins over the configuration, and the option's
	// policy over the configuration's; KnownHostsFile over UserKnownHostsFile.
	s, err = resolve(Options{Host: "ops@build:23", ConfigFile: cfg, StrictHostKeyChecking: "accept-new", KnownHostsFile: "/kh"}, "/home/me", "me")
	if err != nil {
		t.Fatal(err)
	}
	if s.user != "ops" || s.port != 23 || s.strict != "accept-new" || len(s.knownHosts) != 1 || s.knownHosts[0] != "/kh" {
		t.Errorf("overrides: user %q port %d strict %q known %q", s.user, s.port, s.strict, s.knownHosts)
	}

	// An unknown host takes Host * and the defaults (the values of docs/behaviour.md#ssh).
	s, err = resolve(Options{Host: "other", ConfigFile: cfg}, "/home/me", "me")
	if err != nil {
		t.Fatal(err)
	}
	if s.hostName != "other" || s.port != 22 || s.user != "fallback" || s.strict != "accept-new" ||
		s.connectTimeout != 30*time.Second || s.aliveInterval != 15*time.Second || s.aliveCountMax != 3 {
		t.Errorf("defaults: %+v", s)
	}
	if s.knownHosts[0] != "/home/me/.ssh/known_hosts" || s.identities[0] != "/home/me/.ssh/id_ed25519" {
		t.Errorf("default files: %q %q", s.knownHosts, s.identities)
	}
	if _, err := resolve(Options{Host: "x", ConfigFile: filepath.Join(dir, "missing")}, "/home/me", "me"); err == nil {
		t.Error("a missing -F file resolved")
	}
}

func TestStrictPolicy(t *testing.T) {
	for _, c := range [][3]string{
		{"", "", "accept-new"}, {"yes", "no", "yes"}, {"no", "", "no"}, {"bogus", "yes", "accept-new"},
		{"", "ask", "yes"}, {"", "off", "no"}, {"", "accept-new", "accept-new"},
	} {
		if got := strictPolicy(c[0], c[1]); got != c[2] {
			t.Errorf("strictPolicy(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
