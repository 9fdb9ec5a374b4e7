package human

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Piece is text kept on one line wherever it fits: Sep joins it to the piece before on the
// same line, End closes the line when the line breaks before it (a how-line's " ·").
type Piece struct{ Text, Sep, End string }

// Words are text's words as pieces, each joined to the one before by the spaces that stood
// between them, so that pieces that fit on one line give back text as it was.
func Words(text string) []Piece {
	var pieces []Piece
	sep := ""
	for text != "" {
		word := strings.TrimLeft(text, " ")
		sep += text[:len(text)-len(word)]
		n := strings.IndexByte(word, ' ')
		if n < 0 {
			n = len(word)
		}
		if n > 0 {
			pieces = append(pieces, Piece{Text: word[:n], Sep: sep})
			sep = ""
		}
		text = word[n:]
	}
	return pieces
}

// Hang is line broken at its spaces into lines of at most width columns, continuation lines
// indented by indent columns (a hanging indent); width <= 0 or a line that fits: line whole.
func Hang(line string, width, indent int) []string {
	if width <= 0 || ansi.StringWidth(line) <= width {
		return []string{line}
	}
	return Lay(Words(line), width, indent)
}

// Lay is the one rule by which everything a person reads on a terminal is wrapped: pieces in
// order, each on the line before it when it fits there (with its Sep, and room left for the
// End of the piece after it), else first on a line of its own, indented by indent columns (at
// most half the width). No line is ever wider than width: colour codes take no room, a piece
// too wide for a whole line is broken at its spaces, and a word too wide at the width.
// Width <= 0 is no bound: one line.
func Lay(pieces []Piece, width, indent int) []string {
	if width <= 0 {
		var b strings.Builder
		for _, p := range pieces {
			b.WriteString(p.Sep + p.Text)
		}
		return []string{b.String()}
	}
	indent = min(max(indent, 0), width/2)
	var lines []string
	line, lineW, fresh := "", 0, true // fresh: the line holds no piece yet
	breakLine := func(end string) {
		if ansi.StringWidth(end) <= width-lineW {
			line += end
		}
		lines = append(lines, line)
		line, lineW, fresh = strings.Repeat(" ", indent), indent, true
	}
	queue := append([]Piece(nil), pieces...)
	for len(queue) > 0 {
		p := queue[0]
		w := ansi.StringWidth(p.Text)
		next := 0 // room kept for the End the next piece leaves if the line breaks before it
		if len(queue) > 1 {
			next = ansi.StringWidth(queue[1].End)
		}
		if !fresh {
			if sepW := ansi.StringWidth(p.Sep); lineW+sepW+w+next <= width {
				line, lineW = line+p.Sep+p.Text, lineW+sepW+w
				queue = queue[1:]
				continue
			}
			breakLine(p.End)
		}
		lead := "" // what leads the text stays at the start of its first line
		if len(lines) == 0 {
			lead = p.Sep
		}
		if leadW := ansi.StringWidth(lead); lineW+leadW+w <= width {
			line, lineW, fresh = line+lead+p.Text, lineW+leadW+w, false
			queue = queue[1:]
			continue
		}
		if words := Words(p.Text); len(words) > 1 {
			words[0].Sep, words[0].End = p.Sep, p.End
			queue = append(words, queue[1:]...)
			continue
		}
		// One word wider than the room: cut at the width, the rest on lines of its own.
		cut := ansi.Cut(p.Text, 0, width-lineW)
		cutW := ansi.StringWidth(cut)
		if cutW == 0 { // not one character fits: a width no text can be shown in
			cut, cutW = p.Text, w
		}
		line, lineW, fresh = line+cut, width, false
		queue[0] = Piece{Text: ansi.Cut(p.Text, cutW, w)}
	}
	return append(lines, line)
}
