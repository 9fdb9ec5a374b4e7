package tui

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Colours from the 256-colour palette; lipgloss degrades them to the terminal's profile and
// drops them entirely under NO_COLOR or an ASCII profile, where the words carry the meaning.
const (
	colourAccent = lipgloss.Color("111") // titles, the progress bar
	colourDim    = lipgloss.Color("244") // labels, axes, hints
	colourBar    = lipgloss.Color("75")  // counts under the limit
	colourLimit  = lipgloss.Color("214") // the limit line
	colourGood   = lipgloss.Color("78")  // zero overshoot, PASS
	colourBad    = lipgloss.Color("203") // overshoot, errors, FAIL
	colourWarn   = lipgloss.Color("221") // PAUSED, pending asserts
	colourBorder = lipgloss.Color("240")
)

// styles are built from one renderer so a test can force the ASCII profile on every style.
type styles struct {
	r        *lipgloss.Renderer
	title    lipgloss.Style
	label    lipgloss.Style
	value    lipgloss.Style
	dim      lipgloss.Style
	bar      lipgloss.Style
	limit    lipgloss.Style
	good     lipgloss.Style
	bad      lipgloss.Style
	warn     lipgloss.Style
	badgeBad lipgloss.Style
	badgeOK  lipgloss.Style
	badge    lipgloss.Style
	key      lipgloss.Style
	// limitRune is the limit line's character, see columnChart.
	limitRune rune
}

func newStyles(r *lipgloss.Renderer) styles {
	s := r.NewStyle
	limitRune := '▁'
	if r.ColorProfile() == termenv.Ascii {
		limitRune = '╌'
	}
	return styles{
		limitRune: limitRune,
		r:         r,
		title:     s().Bold(true).Foreground(colourAccent),
		label:     s().Foreground(colourDim),
		value:     s().Bold(true),
		dim:       s().Foreground(colourDim),
		bar:       s().Foreground(colourBar),
		limit:     s().Foreground(colourLimit),
		good:      s().Foreground(colourGood),
		bad:       s().Bold(true).Foreground(colourBad),
		warn:      s().Bold(true).Foreground(colourWarn),
		badgeBad:  s().Bold(true).Foreground(colourBad),
		badgeOK:   s().Foreground(colourGood),
		badge:     s().Bold(true).Foreground(colourWarn),
		key:       s().Bold(true).Foreground(colourAccent),
	}
}
