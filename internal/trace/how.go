package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/limitctl/limitctl/internal/human"
)

// HowRequests is how many requests a how-line follows.
const HowRequests = 2

// HowTokens are the pieces of one how-line (the article's form): the events of the Timeline
// with their times from the first one, the count, and what is not shown.
func (o *Overshoot) HowTokens() []string {
	events := o.Timeline(HowRequests)
	var tokens []string
	for _, e := range events {
		t := e.Request + " " + e.Op
		if e.Seq != nil {
			t = fmt.Sprintf("%s seq %d %s", e.Request, *e.Seq, e.Op)
		}
		if e.Reply != "" {
			t += " → " + e.Reply
		}
		// From the first event shown: the gaps are the story. A request to an endpoint was
		// decided somewhere between its sending and its reply: both are told.
		if e.Phase == "request" {
			tokens = append(tokens, fmt.Sprintf("%s (sent +%.2fms, answered +%.2fms)", t,
				float64(e.AtUs-events[0].AtUs)/1000, float64(e.EndUs-events[0].AtUs)/1000))
			continue
		}
		tokens = append(tokens, fmt.Sprintf("%s (+%.2fms)", t, float64(e.AtUs-events[0].AtUs)/1000))
	}
	result := fmt.Sprintf("→ %s at %.2fs, limit %s", o.Count(), o.AtMs/1000, strconv.FormatInt(o.Limit, 10))
	var notes []string
	shown := map[string]bool{}
	for _, e := range events {
		shown[e.Request] = true
	}
	var raced []string
	for _, req := range o.Requests {
		if req.Raced && shown[req.ID] {
			raced = append(raced, req.ID)
		}
	}
	if len(raced) > 0 {
		notes = append(notes, strings.Join(raced, ", ")+" raced")
	}
	if more := int64(len(o.Requests)-len(shown)) + o.Omitted; more > 0 {
		notes = append(notes, fmt.Sprintf("%s more in the JSON", strconv.FormatInt(more, 10)))
	}
	if o.Missing > 0 {
		notes = append(notes, fmt.Sprintf("%s no longer kept", strconv.FormatInt(o.Missing, 10)))
	}
	if o.ThisProcess {
		notes = append(notes, "this process's requests only")
	}
	switch {
	case len(events) == 0 && o.ThisProcess && o.Missing == 0:
		notes = append(notes, "other processes' requests made it: none of this one's")
	case len(events) == 0:
		notes = append(notes, "no request behind it was still kept")
	}
	tokens = append(tokens, result)
	if len(notes) > 0 {
		tokens = append(tokens, "("+strings.Join(notes, "; ")+")")
	}
	return tokens
}

// Wrap joins the events with " · " after head, and the count and the notes with a space,
// wrapped by human.Lay at width with continuation lines indented under the first token; a
// line broken between two events ends in " ·".
func Wrap(head string, tokens []string, width int) []string {
	body := strings.TrimRight(head, " ")
	pieces := human.Words(body)
	for i, t := range tokens {
		p := human.Piece{Text: t, Sep: " "}
		if !strings.HasPrefix(t, "→") && !strings.HasPrefix(t, "(") { // an event
			p.Sep, p.End = " · ", " ·"
		}
		if i == 0 {
			p.Sep, p.End = head[len(body):], ""
		}
		pieces = append(pieces, p)
	}
	return human.Lay(pieces, width, ansi.StringWidth(head))
}
