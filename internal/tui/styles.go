package tui

import (
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Colours from the 256-colour palette; the program degrades them to the terminal's profile,
// and a profile without colour (NO_COLOR, --no-color) draws none: the words carry the meaning.
var (
	colourAccent = lipgloss.Color("111") // titles, the progress bar
	colourDim    = lipgloss.Color("244") // labels, axes, hints
	colourBar    = lipgloss.Color("75")  // counts under the limit
	colourLimit  = lipgloss.Color("214") // the limit line
	colourGood   = lipgloss.Color("78")  // zero overshoot, PASS
	colourBad    = lipgloss.Color("203") // overshoot, errors, FAIL
	colourWarn   = lipgloss.Color("221") // PAUSED, pending asserts
	colourBorder = lipgloss.Color("240")
)

// styles are the dashboard's looks for one colour profile.
type styles struct {
	// colour is false for a profile without colour: View then strips every style, as the
	// words and the limit line's own character carry the meaning.
	colour   bool
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

func newStyles(profile colorprofile.Profile) styles {
	s := lipgloss.NewStyle
	colour := profile == colorprofile.Unknown || profile > colorprofile.ASCII
	limitRune := '▁'
	if !colour {
		limitRune = '╌'
	}
	return styles{
		colour:    colour,
		limitRune: limitRune,
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
