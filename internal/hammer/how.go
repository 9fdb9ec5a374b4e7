package hammer

import (
	"fmt"
	"strings"

	"github.com/limitctl/limitctl/internal/human"
	"github.com/limitctl/limitctl/internal/trace"
)

// HowWidth is the width the how-lines wrap at when the output has no width of its own (a log):
// a line a person reads at a glance.
const HowWidth = 100

// howRequests is how many requests a how-line follows.
const howRequests = 2

// HowLines say, below the verdict lines, how each strategy's first overshoot happened, in the
// article's form: the requests behind it, what each saw and when its write went, and the count
// that resulted, wrapped at width (HowWidth when 0) under their strategy's name:
//
//	naive  how: r4117 ZCARD → 19 (+0.12ms) · r4120 ZCARD → 19 (+0.15ms) · r4117 ZADD (+0.31ms) ·
//	            r4120 ZADD (+0.33ms) → 21 held at 3.20s, limit 20 (r4117 raced; 19 more in the JSON)
func (r Result) HowLines(width int) []string {
	if width <= 0 || width > HowWidth {
		width = HowWidth
	}
	nameW := 0
	for _, st := range r.Summary.Strategies {
		nameW = max(nameW, len(st.Name))
	}
	var out []string
	for _, st := range r.Summary.Strategies {
		if st.FirstOvershoot == nil {
			continue
		}
		head := fmt.Sprintf("%-*s  how: ", nameW, st.Name)
		out = append(out, wrapTokens(head, howTokens(st.FirstOvershoot), width)...)
	}
	return out
}

// howTokens are the pieces of one how-line: the events, the count, and what is not shown.
func howTokens(o *trace.Overshoot) []string {
	events := o.Timeline(howRequests)
	var tokens []string
	for _, e := range events {
		t := e.Request + " " + e.Op
		if e.Reply != "" {
			t += " → " + e.Reply
		}
		// From the first event shown: the gaps are the story.
		tokens = append(tokens, fmt.Sprintf("%s (+%.2fms)", t, float64(e.AtUs-events[0].AtUs)/1000))
	}
	result := fmt.Sprintf("→ %s at %.2fs, limit %s", o.Count(), o.AtMs/1000, human.Count(o.Limit))
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
		notes = append(notes, fmt.Sprintf("%s more in the JSON", human.Count(more)))
	}
	if o.Missing > 0 {
		notes = append(notes, fmt.Sprintf("%s no longer kept", human.Count(o.Missing)))
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

// wrapTokens joins the events with " · " after head, and the count and the notes with a space,
// wrapping at width with continuation lines indented under the first token; a line broken
// between two events ends in " ·".
func wrapTokens(head string, tokens []string, width int) []string {
	indent := strings.Repeat(" ", len([]rune(head)))
	var lines []string
	line := head
	for i, t := range tokens {
		event := !strings.HasPrefix(t, "→") && !strings.HasPrefix(t, "(")
		sep, end := " ", ""
		if event {
			sep, end = " · ", " ·"
		}
		if i == 0 {
			line += t
			continue
		}
		if len([]rune(line+sep+t)) > width {
			lines = append(lines, line+end)
			line = indent + t
			continue
		}
		line += sep + t
	}
	return append(lines, line)
}
