package main

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// results holds every value a `go test -bench` output reported, by
// benchmark name (without the -GOMAXPROCS suffix) and unit.
type results map[string]map[string][]float64

// procSuffix is the "-N" go test appends to a benchmark name.
var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads the standard text format of `go test -bench`: lines of a
// name starting with "Benchmark", the iteration count, then value-unit
// pairs. Every other line is ignored.
func parse(r io.Reader) (results, error) {
	res := results{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		name := procSuffix.ReplaceAllString(f[0], "")
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			if res[name] == nil {
				res[name] = map[string][]float64{}
			}
			res[name][f[i+1]] = append(res[name][f[i+1]], v)
		}
	}
	return res, sc.Err()
}

// median is the median of what name reported in unit; ok is false when it
// reported nothing.
func (r results) median(name, unit string) (float64, bool) {
	vs := r[name][unit]
	if len(vs) == 0 {
		return 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// sub lists the values of key in the sub-benchmark names of parent
// ("BenchmarkStream/client=library" gives "library" for key "client"), in
// no particular order.
func (r results) sub(parent, key string) []string {
	prefix := parent + "/" + key + "="
	var out []string
	for name := range r {
		if v, ok := strings.CutPrefix(name, prefix); ok && !strings.Contains(v, "/") {
			out = append(out, v)
		}
	}
	return out
}

// numericSort orders values that parse as numbers by their value.
func numericSort(vs []string) {
	slices.SortFunc(vs, func(a, b string) int {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return strings.Compare(a, b)
	})
}
