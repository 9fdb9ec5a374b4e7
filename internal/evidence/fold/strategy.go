package fold

import (
	"github.com/limitctl/limitctl/internal/evidence"
	"github.com/limitctl/limitctl/internal/evidence/overshoot"
	"github.com/limitctl/limitctl/internal/evidence/refusal"
	"github.com/limitctl/limitctl/internal/trace"
)

// Strategy is one strategy's evidence, limiter key by key (the limit applies per key): each
// key's overshoot evidence and, where refusals are judged, its refusal judge. Its decisions come
// from whatever judges the strategy: the engine's calls, judge's records, a shared run's
// timeline; Fold adds up what they proved.
//
// The overshoot evidence of a key takes its admits from any goroutine (Key(i).Admit); the
// refusal judges, Record, JudgeBefore and Fold are for one goroutine at a time.
type Strategy struct {
	limit int64
	// firstHit: the verdict judges windows anchored at their openers already, so their power is
	// not stated apart (Findings.CaughtFromFirstHit).
	firstHit bool
	keys     []*overshoot.Evidence

	// judges are the keys' refusal judges (nil: refusals not judged), all built from spec and
	// batching in one scratch; next is the key the next pass judges first.
	judges  []*refusal.Judge
	spec    refusal.Spec
	scratch refusal.Scratch
	next    int
	// request looks up a refused call's request, by id, while its source still keeps it (nil:
	// none is kept); first is the earliest false reject with its request, once found.
	request func(id uint64) *trace.Request
	first   *refusal.FalseReject
}

// New is the evidence of a strategy whose limit is limit; firstHit when its verdict judges windows
// anchored at their openers (--window-start first-hit).
func New(limit int64, firstHit bool) *Strategy {
	return &Strategy{limit: limit, firstHit: firstHit}
}

// NewRefusals is the refusal evidence alone of a strategy of keys keys, judged by spec (a shared
// run's timeline judges refusals over every process's calls; each judged its own admits).
func NewRefusals(spec refusal.Spec, keys int) *Strategy {
	s := &Strategy{spec: spec, judges: make([]*refusal.Judge, 0, keys)}
	for range keys {
		s.addJudge()
	}
	return s
}

// JudgeRefusals has every key's refusals judged by spec, the keys added from now on too; request
// looks a refused call up by id where its source keeps it (nil: it keeps none).
func (s *Strategy) JudgeRefusals(spec refusal.Spec, request func(id uint64) *trace.Request) {
	s.spec, s.request = spec, request
	s.judges = make([]*refusal.Judge, 0, len(s.keys))
	for range s.keys {
		s.addJudge()
	}
}

// JudgesRefusals reports whether the strategy's refusals are judged.
func (s *Strategy) JudgesRefusals() bool { return s.judges != nil }

func (s *Strategy) addJudge() {
	j := refusal.New(s.spec)
	j.ShareScratch(&s.scratch) // judged one key after another on one goroutine
	s.judges = append(s.judges, j)
}

// AddKey adds a key's evidence, built from spec, and its refusal judge where refusals are judged;
// it returns the key's index.
func (s *Strategy) AddKey(spec overshoot.Spec) int {
	s.keys = append(s.keys, overshoot.NewEvidence(spec))
	if s.judges != nil {
		s.addJudge()
	}
	return len(s.keys) - 1
}

// Key is key i's overshoot evidence.
func (s *Strategy) Key(i int) *overshoot.Evidence { return s.keys[i] }

// KeyCount is how many keys the strategy has.
func (s *Strategy) KeyCount() int { return len(s.keys) }

// Judges are the keys' refusal judges, in key order (nil: refusals not judged).
func (s *Strategy) Judges() []*refusal.Judge { return s.judges }

// Record tells d's key's refusal judge of d (a no-op where refusals are not judged).
func (s *Strategy) Record(d evidence.Decision) {
	if s.judges != nil {
		s.judges[d.Key].Record(d)
	}
}

// JudgeBefore judges, for up to keys keys in turn (every key when keys < 1), the refusals replied
// before mark, and looks up the earliest false reject's request while its source keeps it. It
// returns where the refusals not yet judged start (refusal.Judge.UnjudgedFrom): every refusal sent
// before it is judged.
func (s *Strategy) JudgeBefore(mark int64, keys int) (unjudgedFrom int64) {
	if s.judges == nil {
		return refusal.Forever
	}
	if keys < 1 || keys > len(s.judges) {
		keys = len(s.judges)
	}
	for n := 0; n < keys; n++ {
		s.judges[s.next].JudgeBefore(mark)
		s.next = (s.next + 1) % len(s.judges)
	}
	unjudgedFrom = refusal.Forever
	var first *refusal.FalseReject
	for _, j := range s.judges {
		unjudgedFrom = min(unjudgedFrom, j.UnjudgedFrom(mark))
		if j.First != nil && (first == nil || j.First.SentMs < first.SentMs) {
			first = j.First
		}
	}
	if first != nil && (s.first == nil || first.ID != s.first.ID || first.SentMs != s.first.SentMs) {
		found := *first // a copy: the snapshots share it, the judge keeps its own
		if s.request != nil && first.ID != 0 {
			found.Request = s.request(first.ID)
		}
		s.first = &found
	}
	return unjudgedFrom
}

// CloseRefusals ends the refusal judging: what is judged stands, nothing more will be.
func (s *Strategy) CloseRefusals() {
	for _, j := range s.judges {
		j.Close()
	}
}

// DropRefusals ends the refusal judging and forgets what it found: no refusal is judged (a record
// that cannot be placed in time may have taken room at any time).
func (s *Strategy) DropRefusals() {
	s.CloseRefusals()
	s.judges, s.first = nil, nil
}

// Mode is what a fold is for.
type Mode int

const (
	// Live is a tick's: the evidence so far, and each key's peak since the last tick.
	Live Mode = iota
	// Probe is the engine's question whether the evidence so far suffices: with its power, the
	// ticks' state left alone.
	Probe
	// Final settles every key's evidence: the power, the windows proven, all of it.
	Final
)

// Fold adds up every key's evidence into f: the peaks and counts, the power (but Live), the
// windows proven (Final), and where refusals are judged the false rejects found so far.
func (s *Strategy) Fold(f *Findings, mode Mode) {
	for _, ev := range s.keys {
		var r overshoot.CheckResult
		if mode == Final {
			r = ev.Finish()
		} else {
			r = ev.Result()
		}
		f.Peak = max(f.Peak, r.Peak)
		f.Overshoot = max(f.Overshoot, r.Overshoot)
		f.OvershootEvent += r.OvershootEvent
		f.Current = max(f.Current, r.Current)
		f.Unjudged += r.Unjudged
		f.Early += ev.Early()
		if mode == Live {
			f.TickPeak = max(f.TickPeak, ev.TakeTickPeak())
		}
	}
	if mode != Live {
		power := s.power((*overshoot.Evidence).CaughtFrom)
		f.CaughtFrom = &power
	}
	if mode == Final {
		f.CaughtFromFirstHit = s.caughtFromFirstHit(*f.CaughtFrom)
		f.Windows = windowsOf(s.keys)
	}
	s.FoldRefusals(&f.Refusals)
}

// power is the strongest power any key's evidence states by caught, 0 when none states one up to
// PowerSearched.
func (s *Strategy) power(caught func(*overshoot.Evidence, int64) (int64, bool)) int64 {
	best := int64(0)
	for _, ev := range s.keys {
		if k, ok := caught(ev, PowerSearched(s.limit)); ok && (best == 0 || k < best) {
			best = k
		}
	}
	return best
}

// caughtFromFirstHit is the power windows anchored at their openers would have had, where the
// verdict did not judge by them (overshoot.Evidence.CaughtFromAnchored); nil where it is no
// better than the verdict's own.
func (s *Strategy) caughtFromFirstHit(verdict int64) *int64 {
	if s.firstHit {
		return nil
	}
	best := s.power((*overshoot.Evidence).CaughtFromAnchored)
	if best == 0 || verdict != 0 && best >= verdict {
		return nil
	}
	return &best
}

// FoldRefusals adds up the refusal judges' findings into r: how many proven wrong, the earliest
// (with its request, as JudgeBefore found it) and the one with the least room; nothing where
// refusals are not judged.
func (s *Strategy) FoldRefusals(r *Refusals) {
	for _, j := range s.judges {
		r.FalseRejects += j.Count
		if j.Worst != nil && (r.Tightest == nil || j.Worst.Room() < r.Tightest.Room()) {
			tightest := *j.Worst
			r.Tightest = &tightest
		}
	}
	if s.first != nil {
		first := *s.first
		r.FirstFalseReject = &first
	}
}
