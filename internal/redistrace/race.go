package redistrace

import (
	"context"
	"slices"
	"strconv"

	"github.com/limitctl/limitctl/internal/trace"
)

// spanGraceUs is how long after a first overshoot's last answer its commands are still taken: a
// limiter that counts a request after answering it (Kong's log phase) writes then.
const spanGraceUs = 50_000

// FirstOvershoot lists the commands the application sent on the keys of a target's first
// overshoot (ov, as the engine traced it) during its span: from the first of its requests'
// sending to a little after the last's answer; with the race among them when the target's
// decision is check-then-act. Nil when the trace holds nothing for it.
func (t *Tracer) FirstOvershoot(ctx context.Context, target int, decision string, ov *trace.Overshoot) *trace.RedisCommands {
	if ov == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	beginUs := t.sinceBase(t.begin)
	from, to, ok := requestsSpan(ov)
	if !ok {
		if ov.FromMs == nil || ov.ToMs == nil {
			return nil
		}
		from, to = int64(*ov.FromMs*1000), int64(*ov.ToMs*1000)
	}
	to += spanGraceUs
	identities := t.identitiesOf(target, ov)
	var span []*Command
	keys := map[string]bool{}
	for i := range t.cmds {
		c := &t.cmds[i]
		at := c.AtUs - beginUs
		if c.Target != target || !identities[c.Identity] || at < from || at > to {
			continue
		}
		span = append(span, c)
		for _, k := range c.Keys {
			keys[k] = true
		}
	}
	if len(span) == 0 {
		return nil
	}
	slices.SortStableFunc(span, func(a, b *Command) int { return compareAt(a, b) })
	if t.source == SourceMonitor && t.dropped == 0 {
		// Every command on these keys up to the span's end, in Redis's order: the replay's input.
		var history []*Command
		end := to + beginUs
		for i := range t.cmds {
			c := &t.cmds[i]
			if c.AtUs <= end && touches(c, keys) {
				history = append(history, c)
			}
		}
		slices.SortStableFunc(history, func(a, b *Command) int { return compareAt(a, b) })
		replay(ctx, history) //nolint:errcheck // a replay that fails leaves the replies unknown
	}
	var race *trace.RedisRace
	if decision == CheckThenAct {
		race = findRace(span, ov.Limit)
	}
	lo := 0
	if race != nil && len(span) > trace.MaxRedisCommands {
		// Around the race: a few commands before its first read, its first write listed.
		lo = max(0, race.Reads[0]-trace.MaxRedisCommands/4)
		if race.Writes[0] >= lo+trace.MaxRedisCommands {
			lo = race.Writes[0] - trace.MaxRedisCommands + 1
		}
	}
	hi := min(len(span), lo+trace.MaxRedisCommands)
	out := &trace.RedisCommands{FromMs: float64(from) / 1000, ToMs: float64(to) / 1000, Omitted: int64(len(span) - (hi - lo))}
	for k := range keys {
		out.Keys = append(out.Keys, k)
	}
	slices.Sort(out.Keys)
	for _, c := range span[lo:hi] {
		out.Commands = append(out.Commands, publish(c, beginUs))
	}
	if race != nil {
		race.Reads[0], race.Reads[1] = race.Reads[0]-lo, race.Reads[1]-lo
		for i := range race.Writes {
			race.Writes[i] -= lo
		}
		if race.Writes[len(race.Writes)-1] >= hi-lo {
			race.Writes = race.Writes[:1] // the second write beyond what is listed
		}
		out.Race = race
	}
	return out
}

// requestsSpan is from the first sending to the last answer of the requests behind ov (µs from
// the run's start).
func requestsSpan(ov *trace.Overshoot) (from, to int64, ok bool) {
	for _, r := range ov.Requests {
		for _, s := range r.Steps {
			if s.Phase != "request" {
				continue
			}
			if !ok || s.SentUs < from {
				from = s.SentUs
			}
			if !ok || s.RepliedUs > to {
				to = s.RepliedUs
			}
			ok = true
		}
	}
	return from, to, ok
}

// identitiesOf are the identities of the requests behind ov (matched to the run's requests by
// worker and sending, to the µs either way); every identity of the target when none matches.
func (t *Tracer) identitiesOf(target int, ov *trace.Overshoot) map[int]bool {
	type sent struct {
		worker int
		us     int64
	}
	want := map[sent]bool{}
	for _, r := range ov.Requests {
		for _, s := range r.Steps {
			if s.Phase == "request" {
				for d := int64(-1); d <= 1; d++ {
					want[sent{r.Worker, s.SentUs + d}] = true
				}
			}
		}
	}
	out := map[int]bool{}
	for _, r := range t.reqs {
		if r.Target == target && want[sent{r.Worker, r.SentUs}] {
			out[r.Identity] = true
		}
	}
	if len(out) == 0 {
		for i := range max(1, t.ids.Keys) {
			out[i] = true
		}
	}
	return out
}

func touches(c *Command, keys map[string]bool) bool {
	for _, k := range c.Keys {
		if keys[k] {
			return true
		}
	}
	return false
}

// compareAt orders commands by when they ran; a node's own order stands for equal times.
func compareAt(a, b *Command) int {
	switch {
	case a.AtUs < b.AtUs:
		return -1
	case a.AtUs > b.AtUs:
		return 1
	}
	return 0
}

// publish is a command as the first overshoot lists it.
func publish(c *Command, beginUs int64) trace.RedisCommand {
	return trace.RedisCommand{Cmd: c.Name, Keys: c.Keys, Client: c.Client, AtUs: c.AtUs - beginUs, Reply: c.Reply.JSON(),
		ReplyFrom: c.Reply.From, In: c.In}
}

// findRace finds two reads of one key with no write to it between the first and the write after
// both: of such pairs the one that shows the race best (racePair), the earliest of equals. Reads
// and writes are the steps the classifier counts (not a script's own, nor under WATCH; a MULTI's
// that writes is a write).
func findRace(cmds []*Command, limit int64) *trace.RedisRace {
	open := map[string][]int{} // a key's reads since its last write
	var best *trace.RedisRace
	bestScore := -1
	for i, c := range cmds {
		if c.In == "script" || c.Guarded {
			continue
		}
		role := RoleOf(c.Name)
		if c.In == "multi" && role == RoleRead && blockWrites(cmds, i) {
			continue // a read inside a MULTI that writes: one atomic step
		}
		for _, k := range dedupe(c.Keys) {
			switch role {
			case RoleRead:
				open[k] = append(open[k], i)
			case RoleWrite:
				if reads := open[k]; len(reads) >= 2 {
					race, score := racePair(cmds, k, reads, i, limit)
					if i-race.Reads[0] >= trace.MaxRedisCommands-trace.MaxRedisCommands/4 {
						// Too far apart to be listed with the write: the two reads just before it.
						race.Reads = [2]int{reads[len(reads)-2], reads[len(reads)-1]}
					}
					if score > bestScore {
						best, bestScore = race, score
					}
				}
				delete(open, k)
			}
		}
	}
	return best
}

// blockWrites reports whether the MULTI/EXEC cmds[i] ran in holds a write.
func blockWrites(cmds []*Command, i int) bool {
	for _, c := range cmds {
		if c.Step == cmds[i].Step && c.In == "multi" && RoleOf(c.Name) == RoleWrite {
			return true
		}
	}
	return false
}

// maxRaceReads bounds the reads before a write racePair weighs: the latest ones.
const maxRaceReads = 32

// racePair picks, among the reads of key before the write at w, the two that tell the race best,
// and the next write after w. Its score ranks the race: 8 when the two read the same count, 4
// when both counts were under the limit (each would admit), 2 when the two writes came from the
// reads' connections, 1 for two connections, 1 for a second write; the latest pair of equals.
func racePair(cmds []*Command, key string, reads []int, w int, limit int64) (*trace.RedisRace, int) {
	next := -1
	for j := w + 1; j < len(cmds); j++ {
		if RoleOf(cmds[j].Name) == RoleWrite && slices.Contains(cmds[j].Keys, key) && !cmds[j].Guarded && cmds[j].In != "script" {
			next = j
			break
		}
	}
	bestScore, pair := -1, [2]int{}
	reads = reads[max(0, len(reads)-maxRaceReads):]
	for x := len(reads) - 1; x >= 1; x-- {
		for y := x - 1; y >= 0; y-- {
			a, b := cmds[reads[y]], cmds[reads[x]]
			score := 0
			va, aKnown := count(a)
			vb, bKnown := count(b)
			if aKnown && bKnown && trace.ReplyText(a.Reply.JSON()) == trace.ReplyText(b.Reply.JSON()) {
				score += 8
			}
			if aKnown && bKnown && va < limit && vb < limit {
				score += 4
			}
			if next >= 0 && sameClients(a.Client, b.Client, cmds[w].Client, cmds[next].Client) {
				score += 2
			}
			if a.Client != b.Client {
				score++
			}
			if score > bestScore {
				bestScore, pair = score, [2]int{reads[y], reads[x]}
			}
		}
	}
	race := &trace.RedisRace{Key: key, Reads: pair, Writes: []int{w}}
	if next >= 0 {
		race.Writes = append(race.Writes, next)
		bestScore++
	}
	return race, bestScore
}

// count is the count a read's reply says (nil: none yet, 0), when it is known and a number.
func count(c *Command) (int64, bool) {
	if c.Reply.From == "" {
		return 0, false
	}
	switch v := c.Reply.Value.(type) {
	case nil:
		return 0, true
	case int64:
		return v, true
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// sameClients reports whether the two writes came from the two reads' connections, in either order.
func sameClients(ra, rb, wa, wb string) bool {
	return ra != rb && (ra == wa && rb == wb || ra == wb && rb == wa)
}

// dedupe is keys without repeats, sorted.
func dedupe(keys []string) []string {
	if len(keys) < 2 {
		return keys
	}
	out := slices.Clone(keys)
	slices.Sort(out)
	return slices.Compact(out)
}
