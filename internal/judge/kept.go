package judge

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/limitctl/limitctl/internal/bench"
	"github.com/limitctl/limitctl/internal/evidence/fold"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/trace"
)

// What is behind a verdict is told as the records behind it, by file and line. The evidence
// names the admits behind a first overshoot (overshoot.Moment) and the refusal judges the call
// behind a false reject (its id) a little after they were read, so the latest records judged
// are kept in one ring for every group, as the engine's workers keep theirs: a record the ring
// no longer holds is counted as missing, never invented.

// ringSize is how many judged records the ring keeps, about 100 bytes each.
const ringSize = 1 << 15

// entry is a judged record as the ring keeps it.
type entry struct {
	g        *group
	key      int32
	id       uint64
	admitted bool
	// sentUs and repliedUs are its [start, end] from the records' zero; stampMs and lateNs the
	// time a replayed admit was judged at (hammer --record of a Redis strategy).
	sentUs, repliedUs int64
	stampMs, lateNs   int64
	file              int32
	line              int64
	status            int32
	worker            int32
	reply             string
}

// ring keeps the latest entries.
type ring struct {
	buf  []entry
	next int
	full bool
}

func newRing(n int) ring { return ring{buf: make([]entry, n)} }

func (r *ring) add(e entry) {
	r.buf[r.next] = e
	if r.next++; r.next == len(r.buf) {
		r.next, r.full = 0, true
	}
}

// find returns the entries match accepts, oldest first.
func (r *ring) find(match func(*entry) bool) []entry {
	var out []entry
	visit := func(es []entry) {
		for i := range es {
			if es[i].g != nil && match(&es[i]) {
				out = append(out, es[i])
			}
		}
	}
	if r.full {
		visit(r.buf[r.next:])
	}
	visit(r.buf[:r.next])
	return out
}

// traceFirst tells the group's first overshoot (on key i) as the records behind it, once.
func (g *group) traceFirst(i int, m overshoot.Moment) {
	if g.first != nil {
		return
	}
	x := fold.Explain{Limit: g.j.lim.limit, BeginMs: g.j.base / 1e6}
	x.TwoClocks = bench.TwoClocks(g.cfg, g.run)
	g.first = x.Overshoot(i, m, keptOf{g})
}

// keptOf is the ring as what a group kept of its admits.
type keptOf struct{ g *group }

// Admits implements fold.Kept.
func (k keptOf) Admits(match func(*fold.Admit) bool) ([]fold.Admit, []trace.Request, int64) {
	var admits []fold.Admit
	found := k.g.j.kept.find(func(e *entry) bool {
		if e.g != k.g || !e.admitted {
			return false
		}
		a := fold.Admit{ID: e.id, Key: int(e.key), AtMs: e.stampMs, LateNs: e.lateNs, SentUs: e.sentUs, RepliedUs: e.repliedUs}
		if !match(&a) {
			return false
		}
		admits = append(admits, a)
		return true
	})
	requests, omitted := k.g.requests(found)
	return admits, requests, omitted
}

// requests are entries as the published requests behind a verdict, in the order they were
// sent; at most trace.MaxRequests, the rest counted in omitted.
func (g *group) requests(es []entry) (out []trace.Request, omitted int64) {
	sort.SliceStable(es, func(a, b int) bool { return es[a].sentUs < es[b].sentUs })
	for i := range es {
		if len(out) == trace.MaxRequests {
			return out, int64(len(es) - i)
		}
		out = append(out, g.request(&es[i]))
	}
	return out, 0
}

// request is one entry as a published request: named by its file and line, its one step the
// call from its start to its end, its reply the status (or a Redis call's reply).
func (g *group) request(e *entry) trace.Request {
	name := g.j.files[e.file].Name
	op, reply := "request", json.RawMessage(statusText(e.status))
	switch {
	case g.replay != nil:
		op, reply = "call", replyJSON(e.reply)
	case e.status == 0:
		reply = json.RawMessage("null")
	}
	return trace.Request{ID: fmt.Sprintf("%s:%d", filepath.Base(name), e.line), Worker: int(e.worker),
		Steps: []trace.StepOut{{Op: op, Phase: "call", Reply: reply, SentUs: e.sentUs, RepliedUs: e.repliedUs}},
		File:  name, Line: e.line}
}

// replyJSON is a recorded reply as a published one: a number, or a string as Redis sent it.
func replyJSON(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	var n json.Number
	if err := json.Unmarshal([]byte(s), &n); err == nil {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// refusedRequest is the refused call id of g as a published request; nil when the ring no
// longer holds it.
func (g *group) refusedRequest(id uint64) *trace.Request {
	found := g.j.kept.find(func(e *entry) bool { return e.g == g && !e.admitted && e.id == id })
	if len(found) == 0 {
		return nil
	}
	r := g.request(&found[0])
	return &r
}
