package native

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sshconfig "github.com/kevinburke/ssh_config"

	"github.com/acpdrive/acpdrive/domain"
)

// Transport defaults, the values docs/behaviour.md#ssh gives the ssh binary;
// a client configuration that sets ConnectTimeout, ServerAliveInterval or
// ServerAliveCountMax for the host overrides them.
const (
	defaultPort                = 22
	defaultConnectTimeout      = 30 * time.Second
	defaultServerAliveInterval = 15 * time.Second
	defaultServerAliveCountMax = 3
)

// settings is what the client configuration resolves one host to.
type settings struct {
	alias      string   // the host part of Options.Host, as matched against Host patterns
	hostName   string   // the name or address dialled
	port       int      // the port dialled
	user       string   // the remote user
	identities []string // identity files, tokens and ~ expanded, in config order
	// identitiesOnly, from IdentitiesOnly yes: agent keys are not offered.
	identitiesOnly bool
	knownHosts     []string // known_hosts files; the first one receives accept-new additions
	strict         string   // accept-new, yes or no
	connectTimeout time.Duration
	aliveInterval  time.Duration // 0 turns keepalives off
	aliveCountMax  int
}

// addr is the host:port dialled, which is also the name the host key is
// checked under.
func (s settings) addr() string { return net.JoinHostPort(s.hostName, strconv.Itoa(s.port)) }

// configSource answers configuration look-ups for one alias from the files
// in precedence order (the first file that sets a key wins, as in OpenSSH).
type configSource struct {
	files []*sshconfig.Config
}

// loadConfig reads the client configuration: file alone when it is set
// (like ssh -F), else the user's ~/.ssh/config then the system
// /etc/ssh/ssh_config, either of which may be missing.
func loadConfig(file, home string) (*configSource, error) {
	src := &configSource{}
	if file != "" {
		c, err := parseConfigFile(file)
		if err != nil {
			return nil, err
		}
		src.files = append(src.files, c)
		return src, nil
	}
	for _, name := range []string{filepath.Join(home, ".ssh", "config"), filepath.Join("/etc", "ssh", "ssh_config")} {
		c, err := parseConfigFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		src.files = append(src.files, c)
	}
	return src, nil
}

func parseConfigFile(name string) (*sshconfig.Config, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("ssh client config: %w", err)
	}
	defer f.Close()
	c, err := sshconfig.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("ssh client config %s: %w", name, err)
	}
	return c, nil
}

// get returns the first value of key for alias, "" when no file sets it.
func (c *configSource) get(alias, key string) (string, error) {
	for _, f := range c.files {
		v, err := f.Get(alias, key)
		if err != nil {
			return "", err
		}
		if v != "" {
			return v, nil
		}
	}
	return "", nil
}

// getAll returns every value of key for alias from the first file that
// sets it.
func (c *configSource) getAll(alias, key string) ([]string, error) {
	for _, f := range c.files {
		v, err := f.GetAll(alias, key)
		if err != nil {
			return nil, err
		}
		if len(v) > 0 {
			return v, nil
		}
	}
	return nil, nil
}

// splitHost parses "[user@]host[:port]" (an IPv6 address in brackets when
// a port follows). port is 0 when none was given.
func splitHost(spec string) (userName, host string, port int, err error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return "", "", 0, errors.New("empty SSH host")
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		userName, s = s[:i], s[i+1:]
	}
	switch {
	case strings.HasPrefix(s, "["):
		h, p, splitErr := net.SplitHostPort(s)
		if splitErr != nil {
			if strings.HasSuffix(s, "]") {
				return userName, strings.Trim(s, "[]"), 0, nil
			}
			return "", "", 0, fmt.Errorf("SSH host %q: %w", spec, splitErr)
		}
		host, s = h, p
	case strings.Count(s, ":") == 1:
		i := strings.IndexByte(s, ':')
		host, s = s[:i], s[i+1:]
	default:
		return userName, s, 0, nil // a name, or a bare IPv6 address
	}
	n, convErr := strconv.Atoi(s)
	if convErr != nil || n <= 0 || n > 65535 {
		return "", "", 0, fmt.Errorf("SSH host %q: invalid port %q", spec, s)
	}
	if host == "" {
		return "", "", 0, fmt.Errorf("SSH host %q: empty host name", spec)
	}
	return userName, host, n, nil
}

// resolve turns the configured host into the settings a connection uses:
// what Options.Host says first (as on the ssh command line), then the
// client configuration, then the defaults.
func resolve(o Options, home, localUser string) (settings, error) {
	u, alias, port, err := splitHost(o.Host)
	if err != nil {
		return settings{}, err
	}
	cfg, err := loadConfig(o.ConfigFile, home)
	if err != nil {
		return settings{}, err
	}
	s := settings{alias: alias, hostName: alias, port: port, user: u}
	get := func(key string) string {
		if err != nil {
			return ""
		}
		var v string
		v, err = cfg.get(alias, key)
		return v
	}

	if v := get("HostName"); v != "" {
		s.hostName = expandTokens(v, tokens{host: alias})
	}
	if s.port == 0 {
		if v := get("Port"); v != "" {
			n, convErr := strconv.Atoi(v)
			if convErr != nil || n <= 0 || n > 65535 {
				return settings{}, fmt.Errorf("ssh client config: host %s: invalid Port %q", alias, v)
			}
			s.port = n
		} else {
			s.port = defaultPort
		}
	}
	if s.user == "" {
		s.user = get("User")
	}
	if s.user == "" {
		s.user = localUser
	}
	tok := tokens{host: s.hostName, alias: alias, port: s.port, remoteUser: s.user, localUser: localUser, home: home}

	var ids []string
	if err == nil {
		ids, err = cfg.getAll(alias, "IdentityFile")
	}
	for _, id := range ids {
		s.identities = append(s.identities, expandPath(id, tok))
	}
	if len(s.identities) == 0 {
		for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			s.identities = append(s.identities, filepath.Join(home, ".ssh", name))
		}
	}
	s.identitiesOnly = strings.EqualFold(get("IdentitiesOnly"), "yes")

	if o.KnownHostsFile != "" {
		s.knownHosts = []string{o.KnownHostsFile}
	} else if v := get("UserKnownHostsFile"); v != "" {
		for _, f := range strings.Fields(v) {
			s.knownHosts = append(s.knownHosts, expandPath(f, tok))
		}
	} else {
		s.knownHosts = []string{filepath.Join(home, ".ssh", "known_hosts"), filepath.Join(home, ".ssh", "known_hosts2")}
	}

	s.strict = strictPolicy(o.StrictHostKeyChecking, get("StrictHostKeyChecking"))

	// count reads a non-negative whole number option; ok is false when
	// the option is not set.
	count := func(key string) (n int, ok bool, err error) {
		v := get(key)
		if v == "" {
			return 0, false, nil
		}
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			return 0, false, fmt.Errorf("ssh client config: host %s: invalid %s %q", alias, key, v)
		}
		return n, true, nil
	}
	s.connectTimeout = defaultConnectTimeout
	s.aliveInterval = defaultServerAliveInterval
	s.aliveCountMax = defaultServerAliveCountMax
	n, ok, cerr := count("ConnectTimeout")
	if cerr != nil {
		return settings{}, cerr
	}
	if ok && n > 0 {
		s.connectTimeout = time.Duration(n) * time.Second
	}
	if n, ok, cerr = count("ServerAliveInterval"); cerr != nil {
		return settings{}, cerr
	} else if ok {
		s.aliveInterval = time.Duration(n) * time.Second
	}
	if n, ok, cerr = count("ServerAliveCountMax"); cerr != nil {
		return settings{}, cerr
	} else if ok {
		s.aliveCountMax = n
	}
	if err != nil {
		return settings{}, fmt.Errorf("ssh client config: host %s: %w", alias, err)
	}
	return s, nil
}

// strictPolicy picks the host-key policy: the option (worker.ssh_strict_host_key_checking,
// like ssh's -o, wins), else the client configuration's value, else
// accept-new. An invalid option value falls back to accept-new (the
// configuration layer has already warned about it). The configuration's
// "ask" and "off" mean what they mean to ssh in batch mode: nobody can be
// asked, so an unknown key is refused; "off" accepts any.
func strictPolicy(option, fromConfig string) string {
	switch strings.ToLower(strings.TrimSpace(option)) {
	case domain.StrictHostKeyAcceptNew, domain.StrictHostKeyYes, domain.StrictHostKeyNo:
		return strings.ToLower(strings.TrimSpace(option))
	case "":
	default:
		return domain.StrictHostKeyAcceptNew
	}
	switch strings.ToLower(strings.TrimSpace(fromConfig)) {
	case "yes", "ask":
		return domain.StrictHostKeyYes
	case "no", "off":
		return domain.StrictHostKeyNo
	default:
		return domain.StrictHostKeyAcceptNew
	}
}

// tokens are the values the ssh_config percent tokens stand for.
type tokens struct {
	host       string // %h
	alias      string // %n
	port       int    // %p
	remoteUser string // %r
	localUser  string // %u
	home       string // %d
}

// expandTokens replaces the percent tokens ssh_config defines for paths
// and host names; an unknown token is left as written.
func expandTokens(s string, t tokens) string {
	if !strings.ContainsRune(s, '%') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '%':
			b.WriteByte('%')
		case 'h':
			b.WriteString(t.host)
		case 'n':
			b.WriteString(t.alias)
		case 'p':
			b.WriteString(strconv.Itoa(t.port))
		case 'r':
			b.WriteString(t.remoteUser)
		case 'u':
			b.WriteString(t.localUser)
		case 'd':
			b.WriteString(t.home)
		default:
			b.WriteByte('%')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// expandPath expands tokens and a leading ~/ to the home directory.
func expandPath(p string, t tokens) string {
	p = expandTokens(strings.Trim(p, `"`), t)
	if p == "~" {
		return t.home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(t.home, p[2:])
	}
	return p
}

// localIdentity returns this process's home directory and user name.
func localIdentity() (home, name string) {
	home, _ = os.UserHomeDir()
	if u, err := user.Current(); err == nil {
		name = u.Username
		if home == "" {
			home = u.HomeDir
		}
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	return home, name
}
