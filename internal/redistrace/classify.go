package redistrace

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The decisions a target's commands show.
const (
	// Atomic: each decision is one step inside Redis: a script call, a write first whose reply
	// decides (INCR), a MULTI/EXEC that writes, or a WATCH-guarded transaction (retried).
	Atomic = "atomic"
	// CheckThenAct: a read and a later, separate write of the same key decide: every request
	// read the key, and only the admitted ones wrote it.
	CheckThenAct = "check-then-act"
	// Unknown: the commands show neither, or both.
	Unknown = "unknown"
)

// How a decision is told apart. A target's requests are counted (admits A, refusals F, errors
// and requests cut as the run ended E) and its commands on their identities sorted into steps:
// a script call, a WATCH, a write (a command that changes a count, or a MULTI/EXEC that holds
// one), a read (a command that reads one, or a MULTI/EXEC of reads alone); a read or write under
// its connection's WATCH of the key, and the commands a script runs, are part of an atomic step
// and never a step of their own; a key's lifetime (EXPIRE, TTL) and a prune (ZREMRANGEBYSCORE,
// DEL) are neither. Reads and writes are counted per family of keys: a key with its identity and
// its numbers (a window's index) taken out, so a window's counter is one family however many
// windows the run saw, and a second counter (a day's quota) another.
//
//   - atomic: script calls and WATCHes number at least 9 in 10 decisions (each decision one
//     step), or some family's writes at least A + F/2 (refused requests wrote it too: the write
//     came first and its reply decided, as INCR-first, SET NX, a MULTI that writes);
//   - check-then-act: some family's reads number at least 9 in 10 decisions, and its writes at
//     least half the admits and at most A + E + F/10 (a refused request read it and did not
//     write it: the read decided, and the write came later, apart), while script calls and
//     WATCHes number under 1 in 10 decisions.
//
// Both need refusals (minRefusals): while every request is admitted, a write made for every
// request and one made only for admits look the same. Where both rules or neither hold, the
// decision is unknown. So atomic code is never called check-then-act: a WATCH/MULTI retry loop
// reads under WATCH; INCR first, with a TTL or a pipeline of reads after it, writes for every
// request; a script's reads and writes are its own; a MULTI that writes is a write step; and a
// count read and written apart beside a script's decision (a statistic) leaves it unknown.

// minRefusals is how many refusals a decision needs before a target's writes tell it.
const minRefusals = 5

// familyTally counts a family of keys' read and write steps.
type familyTally struct{ reads, writes int64 }

// tally counts one target's commands and requests as they come.
type tally struct {
	ids                       Identities
	byName                    map[string]int64
	readNames, writeNames     map[string]int64 // the unguarded steps' commands
	families                  map[string]*familyTally
	keys                      map[string]bool
	clients                   map[string]bool
	scripts, watches          int64
	admits, refusals, errored int64
}

func newTally(ids Identities) *tally {
	return &tally{ids: ids, byName: map[string]int64{}, readNames: map[string]int64{}, writeNames: map[string]int64{},
		families: map[string]*familyTally{}, keys: map[string]bool{}, clients: map[string]bool{}}
}

// family is the tally of the family of keys k is in: k with its identity and numbers taken out.
func (t *tally) family(k string) *familyTally {
	name := familyOf(k, t.ids)
	f := t.families[name]
	if f == nil {
		f = &familyTally{}
		t.families[name] = f
	}
	return f
}

// familyOf is a key with its identity as {key} and each run of digits as #.
func familyOf(k string, ids Identities) string {
	if i := strings.Index(k, ids.RunID+"."); i >= 0 {
		end := i + len(ids.RunID) + 1
		for end < len(k) && k[end] >= '0' && k[end] <= '9' {
			end++
		}
		k = k[:i] + "{key}" + k[end:]
	}
	var b strings.Builder
	digits := false
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteByte(c)
	}
	return b.String()
}

// request counts a request: decided, errored, or (not decided) cut as the run ended.
func (t *tally) request(r Request) {
	switch {
	case r.NotDecided:
		t.errored++ // it may have sent its commands: allowed for as an error's
	case r.Admitted:
		t.admits++
	case r.Refused:
		t.refusals++
	default:
		t.errored++
	}
}

// step counts commands that ran together: one alone, a MULTI/EXEC's, or a script's own.
func (t *tally) step(cmds []Command) {
	for _, c := range cmds {
		t.byName[c.Name]++
		t.clients[c.Client] = true
		for _, k := range c.Keys {
			t.keys[k] = true
		}
	}
	first := cmds[0]
	switch {
	case first.In == "script":
		return // a script's own commands: its call is the step
	case first.In == "":
		switch RoleOf(first.Name) {
		case RoleScript:
			t.scripts++
		case RoleTx:
			t.watches++ // WATCH: a guarded transaction begins (each retry too)
		case RoleRead:
			if !first.Guarded {
				t.readNames[first.Name]++
				t.count(first.Keys, func(f *familyTally) { f.reads++ })
			}
		case RoleWrite:
			if !first.Guarded {
				t.writeNames[first.Name]++
				t.count(first.Keys, func(f *familyTally) { f.writes++ })
			}
		}
		return
	}
	// A MULTI/EXEC: one step.
	var written, read []string
	guarded := false
	for _, c := range cmds {
		guarded = guarded || c.Guarded
		if c.In == "script" {
			continue // a script's own, in the MULTI: its call is the step
		}
		switch RoleOf(c.Name) {
		case RoleScript:
			t.scripts++
		case RoleWrite:
			written = append(written, c.Keys...)
		case RoleRead:
			read = append(read, c.Keys...)
		}
	}
	switch {
	case guarded:
	case len(written) > 0:
		t.writeNames["MULTI/EXEC"]++
		t.count(written, func(f *familyTally) { f.writes++ })
	case len(read) > 0:
		t.readNames["MULTI/EXEC"]++
		t.count(read, func(f *familyTally) { f.reads++ })
	}
}

// count counts one step in each family of keys it touched, once.
func (t *tally) count(keys []string, add func(*familyTally)) {
	seen := map[*familyTally]bool{}
	for _, k := range keys {
		if f := t.family(k); !seen[f] {
			seen[f] = true
			add(f)
		}
	}
}

// decide says how the target decides, and why, in a few words.
func (t *tally) decide() (decision, why string) {
	a, f, e := t.admits, t.refusals, t.errored
	n := a + f
	atomicSteps := t.scripts + t.watches
	switch {
	case len(t.byName) == 0:
		return Unknown, "no command of the application touched the run's identities"
	case n == 0:
		return Unknown, "no request was decided"
	}
	contended := f >= minRefusals
	scripted := 10*atomicSteps >= 9*n
	var writeFirst, cta *familyTally
	for _, name := range slices.Sorted(maps.Keys(t.families)) {
		fam := t.families[name]
		if contended && 2*fam.writes >= 2*a+f && writeFirst == nil {
			writeFirst = fam
		}
		if contended && 10*fam.reads >= 9*n && 2*fam.writes >= a && 10*fam.writes <= 10*(a+e)+f && 10*atomicSteps < n && cta == nil {
			cta = fam
		}
	}
	switch {
	case cta != nil && !scripted && writeFirst == nil:
		return CheckThenAct, fmt.Sprintf("every request read (%s) and only admits wrote (%s): %d writes for %d admits and %d refusals",
			commonest(t.readNames), commonest(t.writeNames), cta.writes, a, f)
	case scripted && cta == nil:
		return Atomic, fmt.Sprintf("each decision one step: %d %s for %d decisions", atomicSteps, atomicWhat(t), n)
	case writeFirst != nil && cta == nil:
		return Atomic, fmt.Sprintf("every request wrote first (%s), its reply deciding: %d writes for %d decisions", commonest(t.writeNames), writeFirst.writes, n)
	case !contended:
		return Unknown, fmt.Sprintf("%d refusals: too few to tell a write that decides from one made only for admits", f)
	case cta != nil:
		return Unknown, fmt.Sprintf("both: every request read a count that only admits wrote, and %s", atomicEvidence(t, writeFirst, scripted))
	}
	return Unknown, fmt.Sprintf("neither one step per decision nor a read before a separate write (%d script calls or WATCHes for %d admits and %d refusals)",
		atomicSteps, a, f)
}

// atomicEvidence says what made a decision look atomic, beside a read and a write apart.
func atomicEvidence(t *tally, writeFirst *familyTally, scripted bool) string {
	if scripted {
		return fmt.Sprintf("each decision was one step (%s)", atomicWhat(t))
	}
	return fmt.Sprintf("every request wrote a count first (%d writes)", writeFirst.writes)
}

// atomicWhat names a target's atomic steps: script calls, WATCH-guarded transactions, or both.
func atomicWhat(t *tally) string {
	switch {
	case t.watches == 0:
		names := map[string]int64{}
		for name, n := range t.byName {
			if RoleOf(name) == RoleScript {
				names[name] = n
			}
		}
		return commonest(names) + " calls"
	case t.scripts == 0:
		return "WATCH-guarded transactions"
	}
	return "script calls and WATCH-guarded transactions"
}

// commonest is the most counted name (the first in order of equals), "" for none.
func commonest(names map[string]int64) string {
	keys := slices.Sorted(maps.Keys(names))
	best := ""
	for _, k := range keys {
		if best == "" || names[k] > names[best] {
			best = k
		}
	}
	return best
}

// sortedNames are names by their count, most first, then by name.
func sortedNames(counts map[string]int64) []string {
	names := slices.Collect(maps.Keys(counts))
	slices.SortFunc(names, func(x, y string) int {
		return cmp.Or(cmp.Compare(counts[y], counts[x]), strings.Compare(x, y))
	})
	return names
}
