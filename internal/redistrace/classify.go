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
// E) and its commands on their identities sorted into steps: a script call, a WATCH, a write
// (a command that changes a count, or a MULTI/EXEC that holds one), a read (a command that
// reads one, or a MULTI/EXEC of reads alone); a read or write under its connection's WATCH of
// the key, and the commands a script runs, are part of an atomic step and never a step of their
// own; a key's lifetime (EXPIRE, TTL) and a prune (ZREMRANGEBYSCORE, DEL) are neither.
//
//   - atomic: script calls and WATCHes number at least 9 in 10 decisions (each decision one
//     step), or the writes at least A + F/2 (refused requests wrote too: the write came first
//     and its reply decided, as INCR-first, SET NX, a MULTI that writes);
//   - check-then-act: the reads of keys that are also written number at least 9 in 10
//     decisions, the writes at least half the admits and at most the admits, the errors and a
//     tenth of the refusals (a refused request read and did not write: the read decided, and
//     the write came later, apart), and script calls and WATCHes under 1 in 10 decisions.
//
// Both need refusals (minRefusals): while every request is admitted, a write made for every
// request and one made only for admits look the same. Where both rules or neither hold, the
// decision is unknown. So atomic code is never called check-then-act: a WATCH/MULTI retry loop
// reads under WATCH; INCR first, with a TTL or a pipeline of reads after it, writes for every
// request; a script's reads and writes are its own; a MULTI that writes is a write step.

// minRefusals is how many refusals a decision needs before a target's writes tell it.
const minRefusals = 5

// keyTally counts a key's read and write steps.
type keyTally struct{ reads, writes int64 }

// tally counts one target's commands and requests as they come.
type tally struct {
	byName                    map[string]int64
	readNames, writeNames     map[string]int64 // the unguarded steps' commands
	keys                      map[string]*keyTally
	clients                   map[string]bool
	scripts, watches, writes  int64
	admits, refusals, errored int64
}

func newTally() *tally {
	return &tally{byName: map[string]int64{}, readNames: map[string]int64{}, writeNames: map[string]int64{},
		keys: map[string]*keyTally{}, clients: map[string]bool{}}
}

func (t *tally) key(k string) *keyTally {
	kt := t.keys[k]
	if kt == nil {
		kt = &keyTally{}
		t.keys[k] = kt
	}
	return kt
}

// request counts a decided request.
func (t *tally) request(r Request) {
	switch {
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
				for _, k := range dedupe(first.Keys) {
					t.key(k).reads++
				}
			}
		case RoleWrite:
			if !first.Guarded {
				t.writes++
				t.writeNames[first.Name]++
				for _, k := range dedupe(first.Keys) {
					t.key(k).writes++
				}
			}
		}
		return
	}
	// A MULTI/EXEC: one step.
	var written, read []string
	guarded := false
	for _, c := range cmds {
		guarded = guarded || c.Guarded
		switch RoleOf(c.Name) {
		case RoleScript:
			if c.In == "multi" {
				t.scripts++
			}
		case RoleWrite:
			written = append(written, c.Keys...)
		case RoleRead:
			read = append(read, c.Keys...)
		}
	}
	switch {
	case guarded:
	case len(written) > 0:
		t.writes++
		t.writeNames["MULTI/EXEC"]++
		for _, k := range dedupe(written) {
			t.key(k).writes++
		}
	case len(read) > 0:
		t.readNames["MULTI/EXEC"]++
		for _, k := range dedupe(read) {
			t.key(k).reads++
		}
	}
}

func dedupe(keys []string) []string {
	if len(keys) < 2 {
		return keys
	}
	out := slices.Clone(keys)
	slices.Sort(out)
	return slices.Compact(out)
}

// readsOfWritten are the read steps of keys that were also written, apart.
func (t *tally) readsOfWritten() int64 {
	var n int64
	for _, kt := range t.keys {
		if kt.writes > 0 {
			n += kt.reads
		}
	}
	return n
}

// decide says how the target decides, and why, in a few words.
func (t *tally) decide() (decision, why string) {
	a, f, e := t.admits, t.refusals, t.errored
	n := a + f
	reads, writes, atomicSteps := t.readsOfWritten(), t.writes, t.scripts+t.watches
	switch {
	case len(t.byName) == 0:
		return Unknown, "no command of the application touched the run's identities"
	case n == 0:
		return Unknown, "no request was decided"
	}
	contended := f >= minRefusals
	scripted := 10*atomicSteps >= 9*n
	writeFirst := contended && 2*writes >= 2*a+f
	cta := contended && 10*reads >= 9*n && 2*writes >= a && 10*writes <= 10*(a+e)+f && 10*atomicSteps < n
	switch {
	case cta && !scripted && !writeFirst:
		return CheckThenAct, fmt.Sprintf("every request read (%s) and only admits wrote (%s): %d writes for %d admits and %d refusals",
			commonest(t.readNames), commonest(t.writeNames), writes, a, f)
	case scripted && !cta:
		return Atomic, fmt.Sprintf("each decision one step: %d %s for %d decisions", atomicSteps, atomicWhat(t), n)
	case writeFirst && !cta:
		return Atomic, fmt.Sprintf("every request wrote first (%s), its reply deciding: %d writes for %d decisions", commonest(t.writeNames), writes, n)
	case !contended:
		return Unknown, fmt.Sprintf("%d refusals: too few to tell a write that decides from one made only for admits", f)
	}
	return Unknown, fmt.Sprintf("neither one step per decision nor a read before a separate write: %d reads, %d writes, %d script calls or WATCHes for %d admits and %d refusals",
		reads, writes, atomicSteps, a, f)
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
