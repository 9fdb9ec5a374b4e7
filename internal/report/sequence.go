package report

import (
	"fmt"
	"html"
	"html/template"
	"sort"
	"strings"

	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/limiter"
	"github.com/limitctl/limitctl/internal/trace"
)

// sequenceRequests is how many requests the sequence diagram draws, each in its own lane.
const sequenceRequests = 4

// Geometry of the sequence diagram, in its viewBox's units.
const (
	seqTimeW  = 96  // the time column on the left
	seqLaneW  = 200 // a request's lane
	seqRedisW = 150 // Redis's lane, on the right
	seqHeadH  = 56  // lane headers
	seqRowH   = 26  // one event (a command sent, a reply received)
	seqFootH  = 40
)

// seqEvent is one row of the diagram: a request sending a command, or receiving its reply.
type seqEvent struct {
	lane  int
	at    int64 // µs since the run's start
	reply bool
	step  trace.StepOut
}

// sequenceDiagram draws the first overshoot as a sequence diagram: a lane per request (the
// raced ones marked), Redis's lane on the right, each command an arrow to Redis at the time it
// was sent and each reply an arrow back, labelled with what Redis answered, at the time it was
// received. One row per event, in time order, the time beside it: the gaps between events are
// microseconds to milliseconds, so rows keep every arrow readable and the times say how far
// apart they were. Self-contained SVG: no script, no fonts fetched.
func sequenceDiagram(ov *trace.Overshoot) template.HTML {
	if ov == nil || len(ov.Requests) == 0 {
		return ""
	}
	return drawSequence(pickLanes(ov), fmt.Sprintf("→ %s at %.2fs, limit %d", ov.Count(), ov.AtMs/1000, ov.Limit),
		"how the first overshoot happened: "+ov.Count())
}

// refusalDiagram draws a first false reject's refused call the same way: its one lane, what
// Redis answered it, and what the evidence counted.
func refusalDiagram(f *refusal.FalseReject, kind limiter.Kind) template.HTML {
	if f == nil || f.Request == nil || len(f.Request.Steps) == 0 {
		return ""
	}
	return drawSequence([]trace.Request{*f.Request}, "→ "+refusalCaption(f, kind), "the first wrong refusal")
}

// refusalCaption says when the call was refused and what the evidence counted against it.
func refusalCaption(f *refusal.FalseReject, kind limiter.Kind) string {
	return fmt.Sprintf("refused at %.2fs while %s", f.SentMs/1000, f.Counted(kind.Model(), "were"))
}

// drawSequence draws lanes, one per request, with their steps' arrows to Redis and back.
func drawSequence(lanes []trace.Request, caption, label string) template.HTML {
	var events []seqEvent
	for i, r := range lanes {
		for _, s := range r.Steps {
			events = append(events, seqEvent{lane: i, at: s.SentUs, step: s}, seqEvent{lane: i, at: s.RepliedUs, reply: true, step: s})
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].at < events[j].at })
	origin := events[0].at

	width := seqTimeW + len(lanes)*seqLaneW + seqRedisW
	height := seqHeadH + len(events)*seqRowH + seqFootH
	redisX := seqTimeW + len(lanes)*seqLaneW + seqRedisW/2
	laneX := func(i int) int { return seqTimeW + i*seqLaneW + seqLaneW/2 }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s" font-family="ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" font-size="12">`,
		width, height, esc(label))
	bottom := seqHeadH + len(events)*seqRowH
	// Lanes: a header and a lifeline each.
	for i, r := range lanes {
		x := laneX(i)
		colour, tag := hexInk, ""
		if r.Raced {
			colour, tag = hexOver, " · raced"
		}
		fmt.Fprintf(&b, `<g class="lane" data-request="%s"><rect x="%d" y="8" width="%d" height="34" rx="6" fill="`+hexLane+`" stroke="%s"/>`, esc(r.ID), x-seqLaneW/2+12, seqLaneW-24, colour)
		fmt.Fprintf(&b, `<text x="%d" y="24" text-anchor="middle" font-weight="700" fill="%s">%s%s</text>`, x, colour, esc(r.ID), esc(tag))
		who := fmt.Sprintf("worker %d", r.Worker)
		if r.Seq != nil {
			who += fmt.Sprintf(" · seq %d", *r.Seq)
		}
		fmt.Fprintf(&b, `<text x="%d" y="37" text-anchor="middle" fill="`+hexAxis+`">%s</text>`, x, esc(who))
		fmt.Fprintf(&b, `<line x1="%d" y1="42" x2="%d" y2="%d" stroke="`+hexLifeline+`" stroke-dasharray="4 4"/></g>`, x, x, bottom)
	}
	server := "Redis"
	if len(lanes) > 0 && lanes[0].Seq != nil {
		server = "endpoint" // an HTTP target's requests: the limiter decided behind it
	}
	fmt.Fprintf(&b, `<g class="lane redis"><rect x="%d" y="8" width="%d" height="34" rx="6" fill="`+hexRedisFill+`" stroke="`+hexRedis+`"/><text x="%d" y="30" text-anchor="middle" font-weight="700" fill="`+hexRedis+`">%s</text>`,
		redisX-seqRedisW/2+16, seqRedisW-32, redisX, server)
	fmt.Fprintf(&b, `<line x1="%d" y1="42" x2="%d" y2="%d" stroke="`+hexRedisLine+`" stroke-width="3"/></g>`, redisX, redisX, bottom)
	// Events: one row each, the time on the left.
	for n, e := range events {
		y := seqHeadH + n*seqRowH + seqRowH/2 + 4
		x := laneX(e.lane)
		fmt.Fprintf(&b, `<text x="8" y="%d" fill="`+hexAxis+`">+%.3fms</text>`, y+4, float64(e.at-origin)/1000)
		if !e.reply {
			fmt.Fprintf(&b, `<g class="send"><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="`+hexInkSoft+`" stroke-width="1.5"/>%s`, x, y, redisX-8, y, arrowHead(redisX, y, 1, hexInkSoft))
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="`+hexInk+`" font-weight="600">%s</text></g>`, x+8, y-4, esc(e.step.Op))
			continue
		}
		reply := trace.ReplyText(e.step.Reply)
		fmt.Fprintf(&b, `<g class="reply"><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="`+hexCount+`" stroke-width="1.5" stroke-dasharray="5 3"/>%s`, redisX, y, x+8, y, arrowHead(x, y, -1, hexCount))
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="`+hexCount+`">%s → %s</text></g>`, redisX-8, y-4, esc(e.step.Op), esc(reply))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="700" fill="`+hexOver+`">%s</text>`, seqTimeW, bottom+26, esc(caption))
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it is escaped above
}

// arrowHead is a triangle with its tip at (x, y), pointing right (dir 1) or left (-1): drawn,
// not a marker, so the page references nothing.
func arrowHead(x, y, dir int, colour string) string {
	return fmt.Sprintf(`<path d="M%d,%dL%d,%dL%d,%dz" fill="%s"/>`, x, y, x-9*dir, y-4, x-9*dir, y+4, colour)
}

// pickLanes are the requests the diagram draws: the how-line's (the raced request nearest the
// limit and one it cannot have counted), then others behind the moment, in the order they began.
func pickLanes(ov *trace.Overshoot) []trace.Request {
	chosen := map[string]bool{}
	for _, e := range ov.Timeline(2) {
		chosen[e.Request] = true
	}
	for i := len(ov.Requests) - 1; i >= 0 && len(chosen) < sequenceRequests; i-- {
		chosen[ov.Requests[i].ID] = true
	}
	var out []trace.Request
	for _, r := range ov.Requests {
		if chosen[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

func esc(s string) string { return html.EscapeString(s) }

// howNotes say what the diagram leaves out: requests not drawn, no longer kept, or other
// processes'.
func howNotes(ov *trace.Overshoot) []string {
	if ov == nil {
		return nil
	}
	var out []string
	if rest := int64(len(ov.Requests)-len(pickLanes(ov))) + ov.Omitted; rest > 0 {
		out = append(out, fmt.Sprintf("%d more requests behind this moment are in the JSON (first_overshoot).", rest))
	}
	if ov.Missing > 0 {
		out = append(out, fmt.Sprintf("%d requests behind it were no longer kept when the evidence settled (a worker had moved on): not shown.", ov.Missing))
	}
	if ov.ThisProcess {
		out = append(out, "Other processes shared the evidence (--witness redis): only this process's requests are shown.")
	}
	if len(ov.Requests) == 0 {
		out = append(out, "None of the requests behind it could be shown.")
	}
	return out
}
