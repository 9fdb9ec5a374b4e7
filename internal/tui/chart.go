package tui

import (
	"math"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/limitctl/limitctl/internal/human"
)

// eighths are the block characters from empty to full, one eighth of a cell apart.
var eighths = []rune{' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// columnChart draws one column of block characters per value, oldest at the left, scaled so
// the limit (when above zero) falls exactly on a row boundary: a count at the limit fills the
// rows under the line, and only a count above it reaches the line's row and those over it,
// which are drawn in the "over" style. Width and height include the axis labels.
type columnChart struct {
	values        []float64
	limit         float64
	width, height int
	under, over   lipgloss.Style
	line, axis    lipgloss.Style
	// lineRune draws the limit: ▁ sits exactly on the boundary when colour tells it from a
	// column; without colour ╌ cannot be mistaken for one.
	lineRune rune
}

func (c columnChart) render() string {
	if c.height < 1 || c.width < 4 {
		return ""
	}
	rows := c.height
	top, limitRow := c.scale(rows)
	labels := make([]string, rows)
	labels[0] = "0"
	labels[rows-1] = human.Compact(top)
	if limitRow >= 0 {
		labels[limitRow] = human.Compact(c.limit)
	}
	gutter := 0
	for _, l := range labels {
		gutter = max(gutter, len(l))
	}
	plotWidth := c.width - gutter - 1
	if plotWidth < 1 {
		return ""
	}
	values := c.values
	if len(values) > plotWidth {
		values = values[len(values)-plotWidth:]
	}
	unit := top / float64(rows) // value per row

	var b strings.Builder
	for r := rows - 1; r >= 0; r-- {
		axis := "│"
		if labels[r] != "" {
			axis = "┤"
		}
		b.WriteString(c.axis.Render(strings.Repeat(" ", gutter-len(labels[r])) + labels[r] + axis))
		var run strings.Builder
		runStyle := -1
		flush := func() {
			if run.Len() == 0 {
				return
			}
			b.WriteString([]lipgloss.Style{c.under, c.over, c.line}[runStyle].Render(run.String()))
			run.Reset()
		}
		emit := func(style int, ch rune) {
			if style != runStyle {
				flush()
				runStyle = style
			}
			run.WriteRune(ch)
		}
		for x := range plotWidth {
			fill := 0
			if x < len(values) && unit > 0 {
				v := max(values[x], 0)
				fill = int(math.Round(v/unit*8)) - r*8
				fill = min(max(fill, 0), 8)
			}
			switch {
			case fill > 0 && limitRow >= 0 && r >= limitRow:
				emit(1, eighths[fill])
			case fill > 0:
				emit(0, eighths[fill])
			case r == limitRow:
				emit(2, c.lineRune)
			default:
				emit(0, ' ')
			}
		}
		flush()
		if r > 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// scale picks the chart's top value and the row the limit line sits in (-1 without a limit).
// With a limit L and k rows under it, every row is L/k tall; k is as large as fits the
// highest value, and at least one row stays above the line so it is always visible.
func (c columnChart) scale(rows int) (top float64, limitRow int) {
	high := 0.0
	for _, v := range c.values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			high = max(high, v)
		}
	}
	if c.limit <= 0 || rows < 2 {
		if high <= 0 {
			high = 1
		}
		return niceCeil(high), -1
	}
	under := rows - 1
	if high > 0 {
		under = min(under, int(float64(rows)*c.limit/high))
	}
	under = max(under, 1)
	return c.limit / float64(under) * float64(rows), under
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten so axis labels read cleanly.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// sparkline draws the newest width values on one row, from ▁ (zero) to █ (the highest shown).
func sparkline(values []float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(values) > width {
		values = values[len(values)-width:]
	}
	high := 0.0
	for _, v := range values {
		high = max(high, v)
	}
	var b strings.Builder
	for _, v := range values {
		level := 1
		if high > 0 && v > 0 {
			level = 1 + int(math.Round(v/high*7))
		}
		b.WriteRune(eighths[min(max(level, 1), 8)])
	}
	return b.String()
}
