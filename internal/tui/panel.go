package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/bench/verdict"
	"github.com/limitctl/limitctl/internal/human"
)

// Panel sizes: side by side while each panel gets at least minPanelWidth columns, stacked
// below that; a panel is never narrower than tightPanelWidth or shorter than minPanelHeight
// unless the terminal itself is.
const (
	minPanelWidth   = 50
	tightPanelWidth = 38
	minPanelHeight  = 6
	statsWidth      = 38 // the numbers column of a panel laid out wide
	minChartRows    = 4
)

// grid picks columns and rows for n panels in a w x h area.
func grid(n, w, h int) (cols, rows int) {
	if n <= 0 {
		return 0, 0
	}
	maxCols := max(1, w/minPanelWidth)
	rows = (n + maxCols - 1) / maxCols
	for rows > 1 && rows*minPanelHeight > h && w/((n+rows-2)/(rows-1)) >= tightPanelWidth {
		rows-- // too many rows to read: squeeze panels narrower instead
	}
	cols = (n + rows - 1) / rows
	return cols, (n + cols - 1) / cols
}

// split divides total into n parts that differ by at most one, the larger ones first.
func split(total, n int) []int {
	parts := make([]int, n)
	for i := range parts {
		parts[i] = total / n
		if i < total%n {
			parts[i]++
		}
	}
	return parts
}

func (m Model) panels(w, h int) string {
	strategies := m.snap.Strategies
	cols, rows := grid(len(strategies), w, h)
	widths, heights := split(w, cols), split(h, rows)
	var rowViews []string
	for r := range rows {
		var cells []string
		for c := range cols {
			i := r*cols + c
			if i >= len(strategies) {
				break
			}
			cells = append(cells, m.panel(strategies[i], widths[c], heights[r]))
		}
		rowViews = append(rowViews, lipgloss.JoinHorizontal(lipgloss.Top, cells...))
	}
	return lipgloss.JoinVertical(lipgloss.Left, rowViews...)
}

// panel draws one strategy in a w x h box with its verdict in the top border.
func (m Model) panel(s bench.StrategySnapshot, w, h int) string {
	st := m.st
	if w < 8 || h < 3 {
		return lipgloss.NewStyle().Width(w).Height(h).Render("")
	}
	borderColour, badge := colourBorder, ""
	if m.opts.Verdict != nil {
		v := m.opts.Verdict(m.snap, s)
		switch v.Tone() {
		case verdict.ToneBad:
			borderColour, badge = colourBad, st.badgeBad.Render(v.Badge())
		case verdict.ToneGood:
			badge = st.badgeOK.Render(v.Badge())
		default:
			badge = st.badge.Render(v.Badge())
		}
	}
	border := lipgloss.NewStyle().Foreground(borderColour)
	name := st.title.Render(s.Name)

	innerW, innerH := w-4, h-2
	fill := w - 8 - lipgloss.Width(name) - lipgloss.Width(badge) // "╭─ " name " " fill " " badge " ─╮"
	var top string
	if fill >= 1 {
		top = border.Render("╭─ ") + name + " " + border.Render(strings.Repeat("─", fill)+" ") +
			badge + border.Render(" ─╮")
	} else {
		top = border.Render("╭─ ") + truncate(name, max(w-5, 0)) +
			border.Render(strings.Repeat("─", max(w-5-lipgloss.Width(truncate(name, max(w-5, 0))), 0))+"╮")
	}
	body := clip(m.panelBody(s, innerW, innerH), innerW, innerH)
	box := lipgloss.NewStyle().
		Border(lipgloss.RoundedBorder(), false, true, true, true).
		BorderForeground(borderColour).
		Padding(0, 1).
		Width(w). // the border and padding included, as lipgloss v2 measures
		Height(innerH + 1).
		MaxHeight(innerH + 1).
		Render(body)
	return top + "\n" + box
}

// column is lines cut and padded to exactly w columns.
func column(lines []string, w int) string {
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			lines[i] = truncate(l, w)
		} else {
			lines[i] = l + strings.Repeat(" ", w-lw)
		}
	}
	return strings.Join(lines, "\n")
}

// statLine is one line of a panel's numbers; lines with a higher drop go first when short of room.
type statLine struct {
	text string
	drop int
}

func (m Model) statLines(s bench.StrategySnapshot, width int) []statLine {
	st := m.st
	_, _, limit, _ := m.facts()
	h := m.hist[s.Name]
	label := func(l string) string { return st.label.Render(fmt.Sprintf("%-11s", l)) }

	current := st.value.Render(human.Count(s.Current))
	if limit > 0 && s.Current > limit {
		current = st.bad.Render(human.Count(s.Current))
	}
	peak := st.value.Render(human.Count(s.Peak))
	if limit > 0 && s.Peak > limit {
		peak = st.bad.Render(human.Count(s.Peak))
	}
	inFlight := label(m.currentLabel()) + current + st.dim.Render(" / "+human.Count(limit)) +
		st.label.Render("   peak ") + peak

	over := label("overshoot") + st.good.Bold(true).Render("0")
	if s.Overshoot > 0 {
		over = label("overshoot") + st.bad.Render("+"+human.Count(s.Overshoot))
	}
	// The other side of the limit: refusals proven wrong, red above zero.
	strict := label("false rej.") + st.good.Bold(true).Render("0")
	switch {
	case s.FalseRejects > 0:
		strict = label("false rej.") + st.bad.Render(human.Count(s.FalseRejects))
	case s.NoRefusalJudged:
		strict = label("false rej.") + st.dim.Render("n/a (not judged)")
	case s.RefusalsUnjudged != "":
		strict += st.dim.Render(" (judging stopped)")
	}
	if s.OvershootEvent > 0 {
		over += st.dim.Render("  " + human.Count(s.OvershootEvent) + human.Plural(s.OvershootEvent, " event", " events"))
	}

	decided := label("admitted") + st.value.Render(human.Count(s.Admitted)) +
		st.label.Render("  rejected ") + st.value.Render(human.Count(s.Rejected))

	errs := label("errors") + st.good.Render("0")
	if s.Errors > 0 {
		errs = label("errors") + st.bad.Render(human.Count(s.Errors))
		for i, kind := range human.ErrorKinds(s.ErrorsByKind) { // the commonest kinds, as many as fit
			sep := "  "
			if i > 0 {
				sep = ", "
			}
			if lipgloss.Width(errs)+len(sep)+lipgloss.Width(kind) > width {
				break
			}
			errs += st.dim.Render(sep + kind)
		}
	}
	var extras []string
	for _, extra := range []struct {
		name string
		n    int64
	}{{"retries", s.Retries}, {"fail-open", s.FailOpenAdmits}, {"fail-closed", s.FailClosedRejects}, {"abandoned", s.Abandoned}} {
		if extra.n > 0 {
			extras = append(extras, st.label.Render(extra.name+" ")+st.value.Render(human.Count(extra.n)))
		}
	}

	rate := human.Compact(s.Throughput) + "/s"
	throughput := label("throughput") + st.value.Render(fmt.Sprintf("%-8s", rate))
	if h != nil {
		sparkWidth := width - lipgloss.Width(throughput)
		throughput += st.bar.Render(sparkline(h.throughput.last(sparkWidth), sparkWidth))
	}

	lat := st.label.Render("p50 ") + st.value.Render(human.Latency(s.Latency.P50)) +
		st.label.Render("  p99 ") + st.value.Render(human.Latency(s.Latency.P99)) +
		st.label.Render("  p99.9 ") + st.value.Render(human.Latency(s.Latency.P999))

	server := label("server") + st.dim.Render("n/a")
	switch {
	case s.Statuses != nil:
		// An endpoint's answers by status code, the commonest first, as many as fit.
		server = label("statuses")
		for i, code := range statusOrder(s.Statuses) {
			part := st.label.Render(strconv.Itoa(code)+" ") + st.value.Render(human.Count(s.Statuses[code]))
			if i > 0 {
				part = st.dim.Render("  ") + part
			}
			if lipgloss.Width(server)+lipgloss.Width(part) > width {
				break
			}
			server += part
		}
	case s.ServerUsecPerCall != nil:
		server = label("server") + st.value.Render(human.ServerUsec(s.ServerUsecPerCall, "")) +
			st.label.Render(" µs/call")
	}

	lines := []statLine{{inFlight, 0}, {over, 0}, {strict, 0}}
	if m.opts.Redis != nil {
		if decision, text := m.opts.Redis(s.Name); decision != "" {
			// How the application decides, as its commands show: the race behind the numbers.
			word := st.dim.Render(decision)
			switch decision {
			case "check-then-act":
				word = st.bad.Render(decision)
			case "atomic":
				word = st.good.Render(decision)
			}
			lines = append(lines, statLine{label("redis") + word + st.dim.Render("  "+text), 0})
		}
	}
	lines = append(lines, statLine{decided, 2}, statLine{errs, 3})
	if len(extras) > 0 {
		lines = append(lines, statLine{strings.Join(extras, "  "), 5})
	}
	return append(lines, statLine{throughput, 1}, statLine{lat, 1}, statLine{server, 4})
}

// counts is how many of statLines' lines are about counts (the rest are about speed).
func counts(lines []statLine) int { return len(lines) - 3 }

// fitLines keeps at most n lines, dropping the least important first, in their order.
func fitLines(lines []statLine, n int) []string {
	keep := append([]statLine(nil), lines...)
	for len(keep) > max(n, 0) {
		worst := 0
		for i, l := range keep {
			if l.drop >= keep[worst].drop {
				worst = i
			}
		}
		keep = append(keep[:worst], keep[worst+1:]...)
	}
	out := make([]string, len(keep))
	for i, l := range keep {
		out[i] = l.text
	}
	return out
}

// panelBody lays out numbers and charts: numbers beside the chart in a short, wide panel,
// numbers above the charts otherwise.
func (m Model) panelBody(s bench.StrategySnapshot, w, h int) string {
	if w < 1 || h < 1 {
		return ""
	}
	h = max(h, 1)
	if w >= statsWidth+2+24 && h < 7+1+minChartRows+1 {
		stats := fitLines(m.statLines(s, statsWidth), h)
		left := column(stats, statsWidth)
		right := m.countChart(s, w-statsWidth-2, h)
		return lipgloss.JoinHorizontal(lipgloss.Top, left, "  ", right)
	}

	var stats string
	var statRows int
	if w >= statsWidth+2+34 { // room for two columns of numbers: counts left, speed right
		leftLines := m.statLines(s, statsWidth)
		left := leftLines[:counts(leftLines)]
		rightLines := m.statLines(s, min(w-statsWidth-2, 60))
		right := rightLines[counts(rightLines):]
		statRows = max(len(left), len(right))
		stats = lipgloss.JoinHorizontal(lipgloss.Top,
			column(fitLines(left, h), statsWidth), "  ", column(fitLines(right, h), w-statsWidth-2))
	} else {
		lines := m.statLines(s, min(w, 60))
		statRows = len(lines)
		for h-statRows-2 < minChartRows && statRows > 3 {
			statRows--
		}
		statRows = min(statRows, h)
		stats = column(fitLines(lines, statRows), w)
	}
	chartRows := h - statRows - 2 // a blank line and a caption
	if chartRows < minChartRows-1 {
		return stats
	}
	const roomyRows = 16 // beyond this, throughput gets a chart of its own
	if chartRows <= roomyRows {
		return stats + "\n\n" + m.countChart(s, w, chartRows+1)
	}
	throughputRows := (chartRows - 2) * 2 / 5
	countRows := chartRows - throughputRows - 2
	return stats + "\n\n" + m.countChart(s, w, countRows+1) + "\n\n" + m.throughputChart(s, w, throughputRows+1)
}

// countChart is a caption line and the in-flight / per-window columns against the limit.
func (m Model) countChart(s bench.StrategySnapshot, w, h int) string {
	h--
	if h < 1 || w < 8 {
		return ""
	}
	_, _, limit, _ := m.facts()
	values, span := m.series(s.Name, w, func(hs *history) *ring[float64] { return &hs.count })
	caption := m.st.dim.Render(fmt.Sprintf("%s per tick%s", m.currentLabel(), span))
	chart := columnChart{
		values: values, limit: float64(limit), width: w, height: h,
		under: m.st.bar, over: m.st.bad, line: m.st.limit, axis: m.st.dim, lineRune: m.st.limitRune,
	}
	return truncate(caption, w) + "\n" + chart.render()
}

func (m Model) throughputChart(s bench.StrategySnapshot, w, h int) string {
	h--
	if h < 1 || w < 8 {
		return ""
	}
	values, span := m.series(s.Name, w, func(hs *history) *ring[float64] { return &hs.throughput })
	caption := m.st.dim.Render("decisions/s" + span)
	chart := columnChart{
		values: values, width: w, height: h,
		under: m.st.bar, over: m.st.bar, line: m.st.dim, axis: m.st.dim,
	}
	return truncate(caption, w) + "\n" + chart.render()
}

// series is up to w newest values of one strategy's history and a caption for the time they span.
func (m Model) series(name string, w int, pick func(*history) *ring[float64]) ([]float64, string) {
	h := m.hist[name]
	if h == nil {
		return nil, ""
	}
	r := pick(h)
	values := r.last(w)
	span := ""
	if d := h.span(len(values)); d > 0 {
		span = ", last " + human.Clock(d)
	}
	return values, span
}

// limit is the run's limit, as the header shows it.
func (m Model) limit() int64 {
	_, _, limit, _ := m.facts()
	return limit
}

// statusOrder are the status codes counted, the commonest first (the lower code of equals).
func statusOrder(counts map[int]int64) []int {
	codes := make([]int, 0, len(counts))
	for code := range counts {
		codes = append(codes, code)
	}
	sort.Slice(codes, func(i, j int) bool {
		a, b := counts[codes[i]], counts[codes[j]]
		return a > b || a == b && codes[i] < codes[j]
	})
	return codes
}
