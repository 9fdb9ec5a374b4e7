package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/trace"
)

// View is the whole screen in the alternate screen, never wider or taller than the terminal.
// Without colour (NO_COLOR, --no-color) it carries no style at all.
func (m Model) View() tea.View {
	screen := m.screen()
	if !m.st.colour {
		screen = ansi.Strip(screen)
	}
	v := tea.NewView(screen)
	v.AltScreen = true
	return v
}

func (m Model) screen() string {
	w, h := max(m.width, 1), max(m.height, 1)
	header := m.header(w)
	footer := m.footer(w)
	bodyHeight := h - lipgloss.Height(header) - lipgloss.Height(footer)
	var body string
	switch {
	case bodyHeight < 1:
		return clip(header, w, h)
	case m.help:
		body = m.helpView(w, bodyHeight)
	case m.how:
		body = m.howView(w, bodyHeight)
	case !m.hasSnap || len(m.snap.Strategies) == 0:
		body = lipgloss.Place(w, bodyHeight, lipgloss.Center, lipgloss.Center,
			m.st.dim.Render("waiting for the first tick…"))
	default:
		body = m.panels(w, bodyHeight)
	}
	return clip(lipgloss.JoinVertical(lipgloss.Left, header, body, footer), w, h)
}

// clip cuts a block to w columns and h lines, whatever the pieces inside measured.
func clip(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if lipgloss.Width(l) > w {
			lines[i] = truncate(l, w)
		}
	}
	return strings.Join(lines, "\n")
}

func truncate(s string, w int) string {
	return lipgloss.NewStyle().MaxWidth(w).Render(s)
}

// facts are the header values: the options, else what the snapshot says.
func (m Model) facts() (target bench.Target, kind string, limit int64, workers int) {
	o, s := m.opts, m.snap
	target, kind, limit, workers = o.Target, o.Limiter, o.Limit, o.Workers
	if target == (bench.Target{}) {
		target = s.Target
	}
	if kind == "" {
		kind = string(s.Limiter)
	}
	if limit == 0 {
		limit = s.Limit
	}
	if workers == 0 {
		workers = s.Workers
	}
	return
}

func (m Model) header(w int) string {
	st := m.st
	target, kind, limit, workers := m.facts()
	sep := st.dim.Render(" · ")
	parts := []string{st.title.Render("limitctl hammer")}
	if kind != "" {
		parts = append(parts, st.value.Render(kind))
	}
	parts = append(parts, st.label.Render("limit ")+st.value.Render(human.Count(limit)))
	if workers > 0 {
		parts = append(parts, st.value.Render(human.Count(int64(workers)))+st.label.Render(" workers"))
	}
	if target.Kind != "" || target.Addr != "" {
		parts = append(parts, st.label.Render(strings.TrimSpace(target.Kind+" "+target.Addr)))
	}
	line := " " + strings.Join(parts, sep)
	if lipgloss.Width(line) > w { // narrow: the command's name is the first thing to give
		parts[0] = st.title.Render("hammer")
		line = " " + strings.Join(parts, sep)
	}
	lines := []string{line}
	lines = append(lines, m.progressLine(w))
	lines = append(lines, m.assertLines(w)...)
	return strings.Join(lines, "\n")
}

// progressLine is the bar, elapsed / total, percent and the run's state.
func (m Model) progressLine(w int) string {
	st := m.st
	total := m.opts.Total
	if total == 0 {
		total = m.snap.Total
	}
	percent := m.snap.Progress
	if percent == 0 && total > 0 {
		percent = float64(m.snap.Elapsed) / float64(total)
	}
	percent = min(max(percent, 0), 1)
	if m.snap.Done {
		percent = 1
	}
	times := human.Clock(m.snap.Elapsed)
	if total > 0 {
		times += " / " + human.Clock(total)
	}
	info := fmt.Sprintf(" %s %3.0f%%", times, percent*100)

	var badge string
	switch {
	case m.snap.Done:
		badge = st.good.Bold(true).Render("FINISHED")
	case m.paused:
		badge = st.warn.Render("PAUSED")
	case m.snap.Extending != "":
		badge = st.warn.Render("LOADING ON") // past --duration: the evidence is not yet enough for a verdict
	case m.hasSnap:
		badge = st.good.Render("RUNNING")
	default:
		badge = st.dim.Render("STARTING")
	}
	barWidth := w - 2 - lipgloss.Width(info) - 2 - lipgloss.Width(badge) - 1
	if barWidth < 10 {
		return " " + badge + info
	}
	bar := progress.New(
		progress.WithColors(colourAccent),
		progress.WithFillCharacters('█', '░'),
		progress.WithoutPercentage(),
		progress.WithWidth(barWidth),
	)
	bar.EmptyColor = colourBorder
	return " " + bar.ViewAs(percent) + info + "  " + badge
}

// assertLines lists every assert with its verdict, packed into at most two lines.
func (m Model) assertLines(w int) []string {
	if len(m.asserts) == 0 {
		return nil
	}
	st := m.st
	items := make([]string, len(m.asserts))
	for i, a := range m.asserts {
		var verdict string
		switch {
		case !a.Known:
			verdict = st.dim.Render("····")
		case a.Passed:
			verdict = st.good.Bold(true).Render("PASS")
		default:
			verdict = st.bad.Render("FAIL")
		}
		item := verdict + " " + a.Expr
		if a.Known && a.Actual != "" {
			item += st.dim.Render(" (" + a.Actual + ")")
		}
		items[i] = item
	}
	const maxLines = 2
	label := st.label.Render(" asserts ")
	indent := strings.Repeat(" ", lipgloss.Width(label))
	var lines []string
	line := label
	for i, item := range items {
		gap := ""
		if line != label && line != indent {
			gap = "  "
		}
		if lipgloss.Width(line+gap+item) <= w {
			line += gap + item
			continue
		}
		if len(lines) == maxLines-1 {
			more := st.dim.Render(fmt.Sprintf("  +%d more", len(items)-i))
			if lipgloss.Width(line+more) > w {
				more = st.dim.Render(" …")
			}
			line += more
			break
		}
		lines = append(lines, line)
		line = indent + item
	}
	return append(lines, line)
}

func (m Model) footer(w int) string {
	st := m.st
	keys := []string{st.key.Render("q") + st.dim.Render(" quit")}
	if m.opts.Controls != nil && !m.snap.Done {
		what := " pause"
		if m.paused {
			what = " resume"
		}
		keys = append(keys, st.key.Render("p")+st.dim.Render(what))
	}
	if m.overshot() || m.how {
		what := " how it happened"
		if m.how {
			what = " back to the panels"
		}
		keys = append(keys, st.key.Render("h")+st.dim.Render(what))
	}
	what := " help"
	if m.help {
		what = " close help"
	}
	keys = append(keys, st.key.Render("?")+st.dim.Render(what))
	return " " + strings.Join(keys, st.dim.Render("  ·  "))
}

func (m Model) helpView(w, h int) string {
	st := m.st
	kind := m.currentLabel()
	row := func(k, what string) string {
		return "  " + st.key.Render(fmt.Sprintf("%-10s", k)) + " " + what
	}
	lines := []string{
		st.title.Render("Keys"),
		row("q", "end the run now; its summary and verdict print on exit"),
		row("ctrl+c", "interrupt the run (exit 130)"),
		row("p", "pause / resume the load"),
		row("h", "how the first overshoot happened: the requests, their replies"),
		row("?  esc", "show / hide this help"),
		"",
		st.title.Render("Reading a panel"),
		row(kind, "now / limit, and the highest seen in the run"),
		row("columns", "highest "+kind+" per tick, newest at the right"),
		row("╌╌╌", "the limit: a column through it is overshoot (red)"),
		row("overshoot", "peak − limit, proven by the witness; 0 is correct"),
		row("p50 p99", "decision latency percentiles (HDR histogram)"),
		row("server", "Redis's own µs per decision, INFO commandstats"),
	}
	box := lipgloss.NewStyle().
		Border(lipgloss.RoundedBorder()).
		BorderForeground(colourAccent).
		Padding(0, 1).
		Render(strings.Join(lines, "\n"))
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
}

// overshot reports whether some strategy has a first overshoot or wrong refusal to show.
func (m Model) overshot() bool {
	for _, st := range m.snap.Strategies {
		if st.FirstOvershoot != nil || st.FirstFalseReject != nil {
			return true
		}
	}
	return false
}

// howView shows, per strategy, how its first overshoot happened, as the summary's how-lines
// do: the requests behind it, what each saw and when its write went.
func (m Model) howView(w, h int) string {
	st := m.st
	nameW := 0
	for _, s := range m.snap.Strategies {
		nameW = max(nameW, len(s.Name))
	}
	lines := []string{st.title.Render("How the first overshoot happened"), ""}
	for _, s := range m.snap.Strategies {
		if s.FirstOvershoot == nil {
			lines = append(lines, fmt.Sprintf("%-*s  nothing to show: no overshoot", nameW, s.Name))
			continue
		}
		head := fmt.Sprintf("%-*s  how: ", nameW, s.Name)
		lines = append(lines, trace.Wrap(head, s.FirstOvershoot.HowTokens(), max(20, w-6))...) // inside the box's border and padding
		if m.opts.RedisHow != nil {
			if tokens := m.opts.RedisHow(s.Name, s.FirstOvershoot); tokens != nil {
				lines = append(lines, trace.Wrap(fmt.Sprintf("%-*s  redis: ", nameW, s.Name), tokens, max(20, w-6))...)
			}
		}
	}
	for _, s := range m.snap.Strategies {
		if f := s.FirstFalseReject; f != nil {
			head := fmt.Sprintf("%-*s  refused: ", nameW, s.Name)
			lines = append(lines, trace.Wrap(head, f.HowTokens(m.snap.Limiter.Model()), max(20, w-6))...)
		}
	}
	lines = append(lines, "", st.dim.Render("every request and reply: -o json, --report F.html"))
	box := lipgloss.NewStyle().
		Border(lipgloss.RoundedBorder()).
		BorderForeground(colourAccent).
		Padding(0, 1).
		Render(strings.Join(lines, "\n"))
	return lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box)
}

// currentLabel names what Current counts for this limiter (Options.CountLabel), in-flight
// when the caller did not say.
func (m Model) currentLabel() string {
	if m.opts.CountLabel == "" {
		return "in-flight"
	}
	return m.opts.CountLabel
}
