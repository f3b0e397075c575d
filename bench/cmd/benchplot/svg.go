package main

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

const (
	width    = 960
	margin   = 20
	barH     = 26
	panelH   = 170
	panelGap = 20
)

// clientOrder is the order of BenchmarkStream's clients on the chart;
// clients not listed follow in name order.
var clientOrder = []string{"library", "cli-human", "cli-json", "go-sdk", "floor"}

// sessionMetrics are the per-session costs drawn against the session count.
var sessionMetrics = []struct{ unit, title string }{
	{"heap-B/session", "heap bytes per session"},
	{"rss-B/session", "RSS bytes per session"},
	{"threads", "OS threads (all sessions alive)"},
	{"fds/session", "file descriptors per session"},
}

// svg is a document being written.
type svg struct {
	b strings.Builder
	y int // the top of the next chart
}

func (s *svg) printf(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

func (s *svg) text(x, y int, anchor, class, t string) {
	s.printf(`<text x="%d" y="%d" text-anchor="%s" class="%s">%s</text>`+"\n", x, y, anchor, class, html.EscapeString(t))
}

// render draws every chart the results have data for.
func render(r results) string {
	s := &svg{y: margin}
	s.streamChart(r)
	s.sessionCharts(r)
	s.lineSizeChart(r)
	body := s.b.String()
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">
<style>.t{font-size:16px;font-weight:bold}.l{font-size:12px}.v{font-size:11px;fill:#333}.n{font-size:12px;fill:#777;font-style:italic}</style>
<rect width="100%%" height="100%%" fill="white"/>
%s</svg>
`, width, s.y+margin, width, s.y+margin, body)
}

// streamChart: chart 1, notifications per second per client.
func (s *svg) streamChart(r results) {
	s.text(margin, s.y+16, "start", "t", "Notifications per second, same stream for every client (BenchmarkStream; higher is better)")
	s.y += 30
	clients := r.sub("BenchmarkStream", "client")
	slices.SortFunc(clients, func(a, b string) int {
		ia, ib := slices.Index(clientOrder, a), slices.Index(clientOrder, b)
		if ia < 0 {
			ia = len(clientOrder)
		}
		if ib < 0 {
			ib = len(clientOrder)
		}
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	type bar struct {
		name      string
		rate, cpu float64
		hasCPU    bool
	}
	var bars []bar
	top := 0.0
	for _, c := range clients {
		rate, ok := r.median("BenchmarkStream/client="+c, "notifs/s")
		if !ok {
			continue
		}
		cpu, hasCPU := r.median("BenchmarkStream/client="+c, "cpu-ns/notif")
		bars = append(bars, bar{c, rate, cpu, hasCPU})
		top = math.Max(top, rate)
	}
	if len(bars) == 0 {
		s.text(margin, s.y+14, "start", "n", "no BenchmarkStream results")
		s.y += 30
		return
	}
	const labelW, valueW = 110, 260
	plotW := width - 2*margin - labelW - valueW
	for _, b := range bars {
		w := int(float64(plotW) * b.rate / top)
		s.text(margin+labelW-8, s.y+17, "end", "l", b.name)
		s.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", margin+labelW, s.y+4, max(w, 1), barH-8, barColor(b.name))
		label := si(b.rate) + " notifs/s"
		if b.hasCPU {
			label += fmt.Sprintf(" · %s CPU ns/notif", si(b.cpu))
		}
		s.text(margin+labelW+w+6, s.y+17, "start", "v", label)
		s.y += barH
	}
	s.y += panelGap
}

func barColor(client string) string {
	switch {
	case client == "library":
		return "#2b6cb0"
	case strings.HasPrefix(client, "cli"):
		return "#4299e1"
	case client == "floor":
		return "#a0aec0"
	}
	return "#ed8936"
}

// sessionCharts: chart 2, the per-session costs against the session count.
func (s *svg) sessionCharts(r results) {
	s.text(margin, s.y+16, "start", "t", "Per-session costs against the number of live sessions (BenchmarkIdleSessions)")
	s.y += 30
	counts := r.sub("BenchmarkIdleSessions", "sessions")
	numericSort(counts)
	if len(counts) == 0 {
		s.text(margin, s.y+14, "start", "n", "no BenchmarkIdleSessions results")
		s.y += 30 + panelGap
		return
	}
	n := len(sessionMetrics)
	panelW := (width - 2*margin - (n-1)*panelGap) / n
	for i, m := range sessionMetrics {
		x0 := margin + i*(panelW+panelGap)
		var pts []point
		for _, c := range counts {
			if v, ok := r.median("BenchmarkIdleSessions/sessions="+c, m.unit); ok {
				pts = append(pts, point{c, v})
			}
		}
		s.panel(x0, s.y, panelW, m.title, "sessions", pts)
	}
	s.y += panelH + panelGap
}

// lineSizeChart: chart 3, the library's cost per byte by line size.
func (s *svg) lineSizeChart(r results) {
	sizes := r.sub("BenchmarkLineSize", "bytes")
	numericSort(sizes)
	var perByte, xFloor []point
	for _, sz := range sizes {
		name := "BenchmarkLineSize/bytes=" + sz
		if v, ok := r.median(name, "ns/B"); ok {
			perByte = append(perByte, point{siLabel(sz), v})
		}
		if v, ok := r.median(name, "x-floor"); ok {
			xFloor = append(xFloor, point{siLabel(sz), v})
		}
	}
	if len(perByte) == 0 && len(xFloor) == 0 {
		return
	}
	s.text(margin, s.y+16, "start", "t", "Reading lines of one size (BenchmarkLineSize; lower is better)")
	s.y += 30
	panelW := (width - 2*margin - panelGap) / 2
	s.panel(margin, s.y, panelW, "library ns per byte", "line bytes", perByte)
	s.panel(margin+panelW+panelGap, s.y, panelW, "library time / floor time", "line bytes", xFloor)
	s.y += panelH + panelGap
}

// point is one value of a panel, at a category of its x axis.
type point struct {
	x string
	v float64
}

// panel draws one small line chart of pts (categories evenly spaced, y
// from zero) with its title, at x0,y0.
func (s *svg) panel(x0, y0, w int, title, xTitle string, pts []point) {
	s.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#ddd"/>`+"\n", x0, y0, w, panelH)
	s.text(x0+w/2, y0+16, "middle", "l", title)
	if len(pts) == 0 {
		s.text(x0+w/2, y0+panelH/2, "middle", "n", "no data")
		return
	}
	top := 0.0
	for _, p := range pts {
		top = math.Max(top, p.v)
	}
	if top == 0 {
		top = 1
	}
	left, right, upper, lower := x0+12, x0+w-12, y0+40, y0+panelH-34
	step := 0
	if len(pts) > 1 {
		step = (right - left) / (len(pts) - 1)
	}
	var path strings.Builder
	for i, p := range pts {
		x := left + i*step
		if len(pts) == 1 {
			x = (left + right) / 2
		}
		y := lower - int(float64(lower-upper)*p.v/top)
		if i == 0 {
			fmt.Fprintf(&path, "M%d %d", x, y)
		} else {
			fmt.Fprintf(&path, " L%d %d", x, y)
		}
		s.printf(`<circle cx="%d" cy="%d" r="3" fill="#2b6cb0"/>`+"\n", x, y)
		s.text(x, y-7, "middle", "v", si(p.v))
		s.text(x, lower+16, "middle", "v", p.x)
	}
	s.printf(`<path d="%s" fill="none" stroke="#2b6cb0" stroke-width="2"/>`+"\n", path.String())
	s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`+"\n", left, lower, right, lower)
	s.text(x0+w/2, y0+panelH-6, "middle", "n", xTitle)
}

// si renders v with three significant digits and an SI suffix.
func si(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trim(v/1e9) + "G"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e4:
		return trim(v/1e3) + "k"
	}
	return trim(v)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.Contains(s, "e") {
		return fmt.Sprintf("%.0f", v)
	}
	return s
}

// siLabel renders a numeric category ("1000000") with si.
func siLabel(s string) string {
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		return s
	}
	return si(v)
}
