package journaltail

import (
	"path/filepath"
	"strings"
)

// Claims reports whether a word of command names the npm package pkg
// ("@scope/name") or one of its programs bins, by NamesPackage's rule.
func Claims(command []string, pkg string, bins ...string) bool {
	for _, w := range command {
		for _, bin := range bins {
			if NamesPackage(w, pkg, bin) {
				return true
			}
		}
	}
	return false
}

// NamesPackage reports whether one word of a command names the npm
// package pkg ("@scope/name") or its program bin: the package name, with
// or without a version; a path whose base name is bin, or bin with a
// .cmd, .ps1 or .exe extension; or a file inside the package's folder.
// Backslashes count as slashes.
func NamesPackage(word, pkg, bin string) bool {
	p := strings.TrimRight(strings.ReplaceAll(word, `\`, "/"), "/")
	if p == "" {
		return false
	}
	if p == pkg || strings.HasPrefix(p, pkg+"@") {
		return true
	}
	segs := strings.Split(p, "/")
	base := segs[len(segs)-1]
	if base == bin {
		return true
	}
	if ext := filepath.Ext(base); ext != "" && strings.TrimSuffix(base, ext) == bin {
		switch strings.ToLower(ext) {
		case ".cmd", ".ps1", ".exe":
			return true
		}
	}
	scope, name, _ := strings.Cut(pkg, "/")
	for i := 0; i+2 < len(segs); i++ {
		if segs[i] == scope && segs[i+1] == name {
			return true
		}
	}
	return false
}

// ValidID reports whether a session id can name a journal file: not
// empty, not a dot entry, and free of path separators and glob
// characters.
func ValidID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\*?[]`+"\x00")
}
