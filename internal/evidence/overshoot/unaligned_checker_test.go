package overshoot

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// feasible is the brute force the search must agree with: can consecutive groups of the sorted
// stamps, each at most capacity, be given window starts b (holding b..b+R-1, each start at least
// P after the previous one)? Every start is tried, not only the least.
func feasible(stamps []int64, capacity, rangeMs, spacingMs int64) bool {
	return feasibleFrom(stamps, capacity, rangeMs, spacingMs, nil)
}

// feasibleFrom is feasible with windows that start no earlier than floor(their first stamp)
// (anchored windows; nil: anywhere).
func feasibleFrom(stamps []int64, capacity, rangeMs, spacingMs int64, floor func(first int64) int64) bool {
	var try func(i int, prev int64, first bool) bool
	try = func(i int, prev int64, first bool) bool {
		if i == len(stamps) {
			return true
		}
		for e := i; e < len(stamps) && int64(e-i) < capacity; e++ {
			lo := stamps[e] - rangeMs + 1
			if !first {
				lo = max(lo, prev+spacingMs)
			}
			if floor != nil {
				lo = max(lo, floor(stamps[i]))
			}
			for b := lo; b <= stamps[i]; b++ {
				if try(e+1, b, false) {
					return true
				}
			}
		}
		return false
	}
	return try(0, 0, true)
}

func TestUnalignedSearchAgreesWithABruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 3000; round++ {
		limit := int64(1 + rng.IntN(4))
		window := int64(5 + rng.IntN(10))
		late := int64(rng.IntN(3))
		n := 1 + rng.IntN(9)
		stamps := make([]int64, n)
		for i := range stamps {
			stamps[i] = 1000 + int64(rng.IntN(int(3*window)))
		}
		slices.Sort(stamps)
		c := NewUnalignedChecker(limit, window, late, 100)
		c.UseAnchors()
		for i := rng.IntN(3); i > 0; i-- {
			c.NoteUnjudged(900+int64(rng.IntN(int(3*window)+100)), int64(rng.IntN(int(window)))-1)
		}
		for _, s := range stamps {
			c.AdmitMs(s)
		}
		c.Finish()
		floor := func(first int64) int64 { return c.anchorFloor(c.notes, first) }
		for i, w := range c.state.searches {
			want := feasible(stamps, w.capacity, c.rangeMs, c.spacingMs)
			if (w.failed == 0) != want {
				t.Fatalf("round %d: stamps %v capacity %d window %d late %d (R %d P %d): search failed %d times, brute force feasible %v",
					round, stamps, w.capacity, window, late, c.rangeMs, c.spacingMs, w.failed, want)
			}
			a := c.state.anchored[i]
			if want := feasibleFrom(stamps, a.capacity, c.rangeMs, c.spacingMs, floor); (a.failed == 0) != want {
				t.Fatalf("round %d: stamps %v notes %v capacity %d window %d late %d: anchored search failed %d times, brute force feasible %v",
					round, stamps, c.notes, a.capacity, window, late, a.failed, want)
			}
		}
	}
}

// firstHitRun simulates a correct fixed window whose windows open at the first call after the
// last one ended, from workers whose clocks disagree by up to skew ms, each call reaching Redis
// up to rtt ms after its stamp; it feeds the checker what the engine would (the admits stamped in
// whole ms, those later than the checker's Λ left out) and returns the checker's verdict.
// byExpiry: the window ends when its key expires on the server's clock (SET NX EX), else when a
// call's own time passes the anchor kept in the state.
func firstHitRun(rng *rand.Rand, limit, window int64, skew, rtt float64, byExpiry, offByOne bool, idle func(ms float64) bool) CheckResult {
	// Λ covers the skew and half the round trips, at most: the slower calls are left out (and
	// noted), and may be the ones that opened a window.
	lateMs := int64(math.Ceil(2*skew + 1 + rtt*rng.Float64()))
	c := NewUnalignedChecker(limit, window, lateMs, 5000)
	c.UseAnchors() // every call is this one's: those left out are noted
	type call struct {
		arrive, stamp, late float64
	}
	var calls []call
	for real := 0.0; real < 12*float64(window); real += 0.05 + rng.Float64()*0.3 {
		if idle(real) {
			continue
		}
		offset := -skew + rng.Float64()*2*skew
		d := rng.Float64() * rtt
		stamp := real + offset
		calls = append(calls, call{arrive: real + d, stamp: stamp, late: stamp - math.Floor(stamp) + d + skew - offset})
	}
	slices.SortFunc(calls, func(a, b call) int { return int(math.Copysign(1, a.arrive-b.arrive)) })
	anchor, expires, count := math.Inf(-1), math.Inf(-1), int64(0)
	for _, cl := range calls {
		if byExpiry && cl.arrive >= expires || !byExpiry && cl.stamp >= anchor+float64(window) {
			anchor, expires, count = cl.stamp, cl.arrive+float64(window), 0
		}
		allowed := count < limit || offByOne && count == limit
		if !allowed {
			continue
		}
		count++
		if cl.late <= float64(lateMs) {
			c.AdmitMs(int64(math.Floor(cl.stamp)))
		} else {
			c.NoteUnjudged(int64(math.Floor(cl.stamp)), int64(math.Ceil(cl.late)))
		}
	}
	if !c.anchors {
		panic("a note came after the admits it precedes were settled")
	}
	return c.Finish()
}

// A correct first-hit window is never blamed, whether it is ended by its anchor or by its key's
// expiry, re-anchored after idle gaps of any length, with skewed clocks, late calls and stamps
// rounded to the millisecond.
func TestUnalignedCheckerNeverBlamesAFirstHitWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 1000; round++ {
		limit := int64(1 + rng.IntN(20))
		window := int64(20 + rng.IntN(200))
		skew, rtt := rng.Float64()*5, rng.Float64()*40
		gapAt, gapLen := rng.Float64()*6*float64(window), rng.Float64()*2.5*float64(window)
		idle := func(ms float64) bool { return ms >= gapAt && ms < gapAt+gapLen }
		for _, byExpiry := range []bool{false, true} {
			if got := firstHitRun(rng, limit, window, skew, rtt, byExpiry, false, idle); got.Overshoot != 0 {
				t.Fatalf("round %d: limit %d window %d skew %.2f rtt %.2f by expiry %v, idle from %.0f for %.0f: %+v",
					round, limit, window, skew, rtt, byExpiry, gapAt, gapLen, got)
			}
		}
	}
}

// Epoch-aligned windows are one of the alignments a correct limiter may use: never blamed either.
func TestUnalignedCheckerAcceptsAlignedWindows(t *testing.T) {
	c := NewUnalignedChecker(3, 100, 2, 5000)
	for w := int64(0); w < 20; w++ {
		for i := int64(0); i < 3; i++ {
			c.AdmitMs(1_700_000_000_000 + w*100 + 99 - i) // three at the end of each aligned window
		}
	}
	if got := c.Finish(); got.Overshoot != 0 || got.Peak != 3 {
		t.Fatalf("full aligned windows: %+v, want peak 3 and no overshoot", got)
	}
}

// What the admits prove: twice the limit in every window is caught in the second window of load,
// and the peak says how many a window must have held at least: the 80 admits of two such windows
// fit three windows of a correct limiter of 27 (with reordering two windows may share stamps), so
// the proof is of more than 23 and never of more than 27.
func TestUnalignedCheckerCatchesTwiceTheLimit(t *testing.T) {
	start := int64(1_700_000_000_000)
	admit := func(c *UnalignedChecker) {
		for w := int64(0); w < 2; w++ {
			for i := int64(0); i < 40; i++ {
				c.AdmitMs(start + w*1000 + i/10)
			}
		}
	}
	c := NewUnalignedChecker(20, 1000, 21, 5000)
	admit(c)
	got := c.Finish()
	if got.Overshoot == 0 || got.OvershootEvent == 0 {
		t.Fatalf("40 per window for a limit of 20: %+v", got)
	}
	if got.Peak < 24 || got.Peak > 27 {
		t.Errorf("peak %d, want 24 to 27", got.Peak)
	}
	// The live view sees the same before anything settles.
	live := NewUnalignedChecker(20, 1000, 21, 5000)
	admit(live)
	if r := live.Result(); r.Overshoot != got.Overshoot || r.Peak != got.Peak {
		t.Errorf("live %+v, settled %+v", r, got)
	}
}

// The peak is what is proven, not a count of some interval: admits sharing one millisecond may
// belong to two windows (one ending, one just opened by a clock ahead), so six at once with a
// limit of 5 prove only a window of 3 (the searches below the limit are at limit-1, -2, -4, ...:
// the peak is a lower bound at that grain). One too many per window is proven only once the
// windows run out of room to shift: each window can hand one admit on to the next, so with a limit
// of 5 it takes six windows of six in a row, and five do not suffice.
func TestUnalignedCheckerPeakIsWhatIsProven(t *testing.T) {
	start := int64(1_700_000_000_000)
	c := NewUnalignedChecker(5, 1000, 10, 5000)
	for i := 0; i < 6; i++ {
		c.AdmitMs(start)
	}
	if got := c.Finish(); got.Peak < 2 || got.Peak > 3 || got.Overshoot != 0 {
		t.Fatalf("six admits in one ms with a limit of 5: %+v, want peak 2 or 3 and no overshoot", got)
	}
	for w := int64(1); w <= 5; w++ {
		if got := c.Finish(); got.Overshoot != 0 {
			t.Fatalf("six per window for %d windows, limit 5: %+v, want none proven yet", w, got)
		}
		for i := 0; i < 6; i++ {
			c.AdmitMs(start + w*1000)
		}
	}
	if got := c.Finish(); got.Overshoot == 0 {
		t.Fatalf("six per window for six windows in a row, limit 5: %+v, want an overshoot", got)
	}
}

// Anchored at their openers, windows cannot shift to absorb an extra admit: one too many per
// window is proven by the second window of six with a limit of 5, where windows free to start
// anywhere needed six of them (TestUnalignedCheckerPeakIsWhatIsProven). An unjudged call that may
// have opened a window lets it start there.
func TestAnchoredWindowsProveOneTooManySooner(t *testing.T) {
	start := int64(1_700_000_000_000)
	c := NewUnalignedChecker(5, 1000, 10, 5000)
	c.UseAnchors()
	for w := int64(0); w < 2; w++ {
		for i := int64(0); i < 6; i++ {
			c.AdmitMs(start + w*1001 + i)
		}
	}
	if got := c.Finish(); got.Overshoot == 0 {
		t.Fatalf("six per window for two windows, limit 5, anchored: %+v, want an overshoot", got)
	}
	// The same admits, but a call that failed about a window before the first window's admits may
	// have opened a window then, and the first burst may be split between that one and the next:
	// not proven in two windows.
	c = NewUnalignedChecker(5, 1000, 10, 5000)
	c.UseAnchors()
	c.NoteUnjudged(start-990, -1)
	for w := int64(0); w < 2; w++ {
		for i := int64(0); i < 6; i++ {
			c.AdmitMs(start + w*1001 + i)
		}
	}
	if got := c.Finish(); got.Overshoot != 0 {
		t.Fatalf("an unjudged call a window before: %+v, want no overshoot proven", got)
	}
	// A note that comes after later admits were settled turns the anchors off: no evidence.
	c = NewUnalignedChecker(5, 1000, 10, 50)
	c.UseAnchors()
	for w := int64(0); w < 2; w++ {
		for i := int64(0); i < 6; i++ {
			c.AdmitMs(start + w*1001 + i)
		}
	}
	c.NoteUnjudged(start, 0)
	if got := c.Finish(); got.Overshoot != 0 || c.anchors {
		t.Fatalf("a late note: %+v (anchors %v), want the anchored proof withdrawn", got, c.anchors)
	}
}

// windowFamily is a correct fixed window's way of placing its windows (SPEC section 11): the
// model of unknown alignment must hold every one of them.
type windowFamily string

const (
	epochWindows    windowFamily = "epoch-aligned"
	gridWindows     windowFamily = "a grid phased by its first hit"
	firstHitWindows windowFamily = "opened by the first call after the last ended"
	roundedWindows  windowFamily = "opened by a call, its start rounded down to a whole unit"
)

var windowFamilies = []windowFamily{epochWindows, gridWindows, firstHitWindows, roundedWindows}

// familyLoad is one simulated run: a limiter of a family, its window and limit, the unit its
// rounded starts use, the workers' skew and round trip (ms), the idle spells, and whether the
// window ends by its key's expiry on the server's clock (else by the time in the calls).
type familyLoad struct {
	family     windowFamily
	limit      int64
	window     float64
	unit       float64
	skew, rtt  float64
	byExpiry   bool
	idle       func(ms float64) bool
	anchored   bool // judge with windows anchored at their openers (--window-start first-hit)
	extraEvery int  // 0, or admit one more than the limit in every window (a buggy limiter)
	// quantum, when set, is the unit the limiter is told the time in ({now_s_int}: its now is the
	// time floored to it, and a call is late by the units that turned before it reached Redis).
	quantum float64
	spacing float64 // the calls' mean spacing, ms (0: 0.2)
}

// familyRun feeds a checker what the engine would from a correct (or, with extraEvery, buggy)
// limiter of the load's family: the admits stamped in whole ms, those later than the checker's Λ
// left out and noted, as in firstHitRun.
func familyRun(rng *rand.Rand, l familyLoad) CheckResult {
	lateMs := int64(math.Ceil(2*l.skew + 1 + l.rtt*rng.Float64()))
	c := NewUnalignedChecker(l.limit, int64(l.window), lateMs, 5000)
	if l.anchored {
		c.UseAnchors()
	} else {
		c.NoteOpeners()
	}
	type call struct{ arrive, stamp, late float64 }
	var calls []call
	origin := 1e6 + rng.Float64()*l.window*5 // the epoch's phase against the run
	spacing := l.spacing
	if spacing == 0 {
		spacing = 0.2
	}
	for real := origin; real < origin+14*l.window; real += spacing * (0.25 + 1.5*rng.Float64()) {
		if l.idle(real - origin) {
			continue
		}
		offset := -l.skew + rng.Float64()*2*l.skew
		d := rng.Float64() * l.rtt
		stamp := real + offset
		late := stamp - math.Floor(stamp) + d + l.skew - offset
		if q := l.quantum; q > 0 {
			// Told whole units: its now is floored, and late by the units that turned before the
			// most advanced clock's time at its arrival (Lateness).
			late = math.Floor((stamp+d+l.skew-offset)/q)*q - math.Floor(stamp/q)*q
			stamp = math.Floor(stamp/q) * q
		}
		calls = append(calls, call{arrive: real + d, stamp: stamp, late: late})
	}
	slices.SortFunc(calls, func(a, b call) int { return int(math.Copysign(1, a.arrive-b.arrive)) })
	counts := map[int64]*int64{} // epoch: a counter per window index
	start, close, expires, tick, count := math.Inf(-1), math.Inf(-1), math.Inf(-1), int64(0), int64(0)
	for _, cl := range calls {
		var used *int64
		switch l.family {
		case epochWindows:
			i := int64(math.Floor(cl.stamp / l.window))
			if counts[i] == nil {
				counts[i] = new(int64)
			}
			used = counts[i]
		case gridWindows:
			if cl.arrive >= expires { // the key expired: a new grid from this call
				start, tick, count = cl.stamp, 0, 0
			}
			if t := int64(math.Max(0, math.Floor((cl.stamp-start)/l.window))); t > tick {
				tick, count = t, 0
			}
			used = &count
		case firstHitWindows, roundedWindows:
			if l.byExpiry && cl.arrive >= expires || !l.byExpiry && cl.stamp >= close {
				start = cl.stamp
				if l.family == roundedWindows {
					start = math.Floor(cl.stamp/l.unit) * l.unit
				}
				close, expires, count = start+l.window, cl.arrive+(start+l.window-cl.stamp), 0
			}
			used = &count
		}
		allowed := *used < l.limit || l.extraEvery > 0 && *used == l.limit
		if !allowed {
			continue
		}
		*used++
		if l.family == gridWindows {
			expires = cl.arrive + 3*l.window // renewed by every admit: the grid lives on
		}
		if cl.late <= float64(lateMs) {
			c.AdmitMs(int64(math.Floor(cl.stamp)))
		} else {
			c.NoteUnjudged(int64(math.Floor(cl.stamp)), int64(math.Ceil(cl.late)))
		}
	}
	return c.Finish()
}

// randomFamilyLoad is a load on a limiter of family f: a limit of 1 to 20, a window of 5 to 20
// units of 10 to 20ms (whole units for the rounded family), skewed clocks, round trips up to
// 40ms, an idle spell anywhere of up to 2.5 windows.
func randomFamilyLoad(rng *rand.Rand, f windowFamily) familyLoad {
	unit := float64(10 + rng.IntN(11))
	l := familyLoad{family: f, limit: int64(1 + rng.IntN(20)), unit: unit, window: unit * float64(5+rng.IntN(16)),
		skew: rng.Float64() * 5, rtt: rng.Float64() * 40, byExpiry: rng.IntN(2) == 0}
	gapAt, gapLen := rng.Float64()*6*l.window, rng.Float64()*2.5*l.window
	l.idle = func(ms float64) bool { return ms >= gapAt && ms < gapAt+gapLen }
	return l
}

// Told the time in whole seconds ({now_s_int}), a correct fixed window of any family is judged at
// its floored stamps, the calls a second turned for left out: never blamed, whether its window
// ends by the time it is told or by its key's expiry on the server's clock. (Windows on the
// seconds' grid would be sharper, but a window its key's expiry ends opens and closes between
// the seconds, so no grid holds it.)
func TestUnalignedCheckerHoldsEveryFamilyOnWholeSeconds(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, f := range windowFamilies {
		for round := 0; round < 200; round++ {
			l := randomFamilyLoad(rng, f)
			l.unit, l.spacing = 1000, 4
			l.quantum, l.window = l.unit, l.unit*float64(1+rng.IntN(3))
			if got := familyRun(rng, l); got.Overshoot != 0 {
				t.Fatalf("%s, round %d: limit %d window %.0f skew %.2f rtt %.2f by expiry %v: blamed, %+v",
					f, round, l.limit, l.window, l.skew, l.rtt, l.byExpiry, got)
			}
			if f != firstHitWindows {
				continue
			}
			// And anchored at their openers, as --window-start first-hit says of such a window.
			if l.anchored = true; familyRun(rng, l).Overshoot != 0 {
				t.Fatalf("%s anchored, round %d: limit %d window %.0f skew %.2f rtt %.2f by expiry %v: blamed",
					f, round, l.limit, l.window, l.skew, l.rtt, l.byExpiry)
			}
		}
	}
}

// The model of unknown alignment, the default, blames no correct fixed window of any family,
// whether its window ends by the time in the calls or by its key's expiry, with skewed clocks,
// late calls, idle spells and stamps rounded to the millisecond.
func TestUnalignedCheckerNeverBlamesACorrectFixedWindowOfAnyFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, f := range windowFamilies {
		for round := 0; round < 400; round++ {
			l := randomFamilyLoad(rng, f)
			if got := familyRun(rng, l); got.Overshoot != 0 {
				t.Fatalf("%s, round %d: limit %d window %.0f unit %.0f skew %.2f rtt %.2f by expiry %v: blamed, %+v",
					f, round, l.limit, l.window, l.unit, l.skew, l.rtt, l.byExpiry, got)
			}
		}
	}
}

// Windows anchored at their openers hold only the first-hit family: a grid's first call after an
// idle spell lands inside a window that began before it, and the anchored model blames it. That
// is why it judges only where the contract says so (--window-start first-hit).
func TestAnchoredWindowsBlameAGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	blamed := 0
	for round := 0; round < 200; round++ {
		l := randomFamilyLoad(rng, gridWindows)
		l.anchored, l.limit, l.skew, l.rtt = true, 10+int64(rng.IntN(10)), 0.5, 1
		if familyRun(rng, l).Overshoot > 0 {
			blamed++
		}
	}
	if blamed == 0 {
		t.Fatal("the anchored model never blamed a correct grid in 200 runs: is the grid simulated?")
	}
	t.Logf("anchored windows blamed a correct grid in %d of 200 runs", blamed)
}

// The model grows no looser than the families: a window opened by a call at its whole unit is
// correct only for windows of whole units. At one and a half units a window can end half a unit
// early, and a full window's admits follow a unit after the last; the model proves it in some
// runs. And a limiter of any family that admits one more than the limit is caught in some runs.
func TestUnalignedCheckerCatchesWhatNoFamilyAllows(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []struct {
		name string
		set  func(*familyLoad)
	}{
		{"rounded start, 1.5 units", func(l *familyLoad) { l.family, l.window = roundedWindows, 1.5*l.unit }},
		{"grid, one too many", func(l *familyLoad) { l.family, l.extraEvery = gridWindows, 1 }},
		{"epoch, one too many", func(l *familyLoad) { l.family, l.extraEvery = epochWindows, 1 }},
	} {
		caught := 0
		for round := 0; round < 100; round++ {
			l := randomFamilyLoad(rng, firstHitWindows)
			l.idle = func(float64) bool { return false }
			l.limit, l.skew, l.rtt = 2+int64(rng.IntN(4)), 0.5, 1
			tc.set(&l)
			if familyRun(rng, l).Overshoot > 0 {
				caught++
			}
		}
		if caught == 0 {
			t.Errorf("%s: never caught in 100 runs", tc.name)
		}
		t.Logf("%s: caught in %d of 100 runs", tc.name, caught)
	}
}
