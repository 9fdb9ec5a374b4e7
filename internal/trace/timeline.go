package trace

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Event is one moment of a short timeline: a request's command sent (a check with the count Redis
// answered it, a write), or its script call answered, with the reply as a person reads it.
type Event struct {
	Request string
	Op      string
	Phase   string
	Reply   string // empty for a write: the how-lines show what was seen, and when the writes went
	AtUs    int64  // µs since the run's start: a check's or write's sending, a call's reply, a request's sending
	// EndUs is a request's reply (an endpoint decided between AtUs and EndUs), and Seq its
	// number among its worker's; zero otherwise.
	EndUs int64
	Seq   *uint64
}

// Timeline picks the few events that tell how the overshoot happened, in time order: the race as
// Redis ran it, both checks sent before either write and each blind to the other's write (see
// racePair); else the raced request that saw the most (the nearest the limit; the latest of
// equals) beside a request it cannot have counted; then other raced ones up to shown requests.
// Without a race (a script, or a race the times cannot show), the last shown requests' calls or
// checks before the moment.
func (o *Overshoot) Timeline(shown int) []Event {
	picked := o.pick(shown)
	var out []Event
	for _, r := range picked {
	steps:
		for _, s := range r.Steps {
			switch s.Phase {
			case "check":
				if s.Op == "WATCH" {
					continue
				}
				out = append(out, Event{Request: r.ID, Op: s.Op, Phase: s.Phase, Reply: ReplyText(s.Reply), AtUs: s.SentUs})
			case "call":
				out = append(out, Event{Request: r.ID, Op: s.Op, Phase: s.Phase, Reply: ReplyText(s.Reply), AtUs: s.RepliedUs})
			case "request":
				out = append(out, Event{Request: r.ID, Op: s.Op, Phase: s.Phase, Reply: ReplyText(s.Reply), AtUs: s.SentUs, EndUs: s.RepliedUs, Seq: r.Seq})
			case "write":
				out = append(out, Event{Request: r.ID, Op: s.Op, Phase: s.Phase, AtUs: s.SentUs})
				break steps // the first write took the room; the rest add nothing here
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AtUs < out[j].AtUs })
	return out
}

// pick chooses the requests a timeline shows.
func (o *Overshoot) pick(shown int) []Request {
	var out []Request
	has := func(id string) bool {
		for _, r := range out {
			if r.ID == id {
				return true
			}
		}
		return false
	}
	order := make([]Request, 0, len(o.Requests))
	for i := len(o.Requests) - 1; i >= 0; i-- {
		order = append(order, o.Requests[i])
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].seen() > order[j].seen() })
	if shown >= 2 {
		if r, p, ok := racePair(order); ok {
			out = append(out, r, p)
		}
	}
	for _, r := range order {
		if len(out) >= shown {
			break
		}
		if !r.Raced || has(r.ID) {
			continue
		}
		out = append(out, r)
		if p, ok := o.partner(r); ok && !has(p.ID) && len(out) < shown {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		return out
	}
	if n := len(o.Requests); n > shown {
		return o.Requests[n-shown:]
	}
	return o.Requests
}

// seen is the count the request's check read, when it is a number (-1 otherwise).
func (r Request) seen() float64 {
	check, ok := r.stepOf("check")
	if !ok {
		return -1
	}
	n, err := strconv.ParseFloat(ReplyText(check.Reply), 64)
	if err != nil {
		return -1
	}
	return n
}

// partner is a request whose write was sent after r's check was answered: one r did not count
// (pick has looked for a pair that did not count each other either, and found none).
func (o *Overshoot) partner(r Request) (Request, bool) {
	check, ok := r.stepOf("check")
	if !ok {
		return Request{}, false
	}
	for _, p := range o.Requests {
		if pw, ok := p.stepOf("write"); ok && p.ID != r.ID && check.RepliedUs < pw.SentUs {
			return p, true
		}
	}
	return Request{}, false
}

// racePair is the pair of requests that shows the race as Redis ran it: both checks sent before
// either write, so a reader sees both counts taken and then both writes. Of such pairs it
// prefers, in order, one whose order the replies prove both ways (each check answered before the
// other's write was sent: neither can have counted the other), one whose checks read the same
// count (neither saw the other's write: a write between them would have raised it unless a
// member left just then), one proven one way, and then the pair that saw the most. order lists
// the requests nearest the limit first; the first of equals wins.
func racePair(order []Request) (Request, Request, bool) {
	best, bestScore := [2]int{-1, -1}, -1
	for i, r := range order {
		for j := i + 1; j < len(order); j++ {
			p := order[j]
			score, ok := raceScore(r, p)
			if ok && score > bestScore {
				best, bestScore = [2]int{i, j}, score
			}
		}
	}
	if bestScore < 0 {
		return Request{}, Request{}, false
	}
	return order[best[0]], order[best[1]], true
}

// raceScore ranks a pair whose checks were both sent before either write (ok false otherwise):
// 4 for an order proven both ways, 2 for the same count read, 1 for an order proven one way.
func raceScore(r, p Request) (score int, ok bool) {
	rc, rcOK := r.stepOf("check")
	rw, rwOK := r.stepOf("write")
	pc, pcOK := p.stepOf("check")
	pw, pwOK := p.stepOf("write")
	if !rcOK || !rwOK || !pcOK || !pwOK || max(rc.SentUs, pc.SentUs) >= min(rw.SentUs, pw.SentUs) {
		return 0, false
	}
	rBlind, pBlind := rc.RepliedUs < pw.SentUs, pc.RepliedUs < rw.SentUs
	switch {
	case rBlind && pBlind:
		score = 4
	case rBlind || pBlind:
		score = 1
	}
	if r.seen() >= 0 && r.seen() == p.seen() {
		score += 2
	}
	return score, true
}

// stepOf is the request's first step of a phase (a check other than WATCH).
func (r Request) stepOf(phase string) (StepOut, bool) {
	for _, s := range r.Steps {
		if s.Phase == phase && s.Op != "WATCH" {
			return s, true
		}
	}
	return StepOut{}, false
}

// Count is the moment's count and what it counted: "21 held", "21 in window".
func (o *Overshoot) Count() string {
	switch {
	case o.Held != nil:
		return strconv.FormatInt(*o.Held, 10) + " held"
	case o.InWindow != nil && o.Allowed != nil && o.FromMs != nil && o.ToMs != nil:
		return fmt.Sprintf("%d in %.2fs where at most %d fit", *o.InWindow, (*o.ToMs-*o.FromMs)/1000, *o.Allowed)
	case o.InWindow != nil:
		return strconv.FormatInt(*o.InWindow, 10) + " in window"
	}
	return ""
}

// ReplyText is a published reply as a person reads it: 19 for the string "19" (a count read
// with GET), {1, 21} for an array, nil, or the error's message.
func ReplyText(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			b, _ := json.Marshal(e)
			parts[i] = string(b)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case map[string]any:
		if msg, ok := x["error"].(string); ok {
			return "error " + msg
		}
	}
	return string(raw)
}
